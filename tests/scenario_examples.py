"""Scenario files for the tests: the seed's own example (seed 003, "Schema", eval/scenarios/order_delay.yml,
indented as in the Rasa docs page the seed was taken from) and a Rasa domain for it."""

SEED_EXAMPLE = """\
scenario:
  name: Agent handles delayed order gracefully

  simulation_context: >
    You are an impatient customer who escalates quickly if not given a direct answer.
    You want to find out why the order is delayed and get a clear resolution.

  setup:
    initial_slots:
      authenticated: true
      account_id: "12345"
      order_id: "ORD-9981"

  goals:
    criteria:
      - Agent communicates the delay reason clearly and empathetically
      - Agent does not ask the user to repeat information already provided
    assertions:
      - flow_started:
          flow_ids: [check_order_status]
          operator: any
      - flow_completed:
          flow_id: check_order_status
      - flow_cancelled:
          flow_id: verify_identity
      - action_executed: action_check_order_status
      - slot_was_set:
          - name: order_id
            value: "ORD-9981"
      - slot_was_not_set:
          - name: transfer_amount
      - bot_uttered:
          utter_name: utter_order_delayed
      - bot_did_not_utter:
          utter_name: utter_dont_know
      - pattern_clarification_contains:
          flow_ids: [check_order_status, track_shipment]
          operator: any
      - generative_response_is_relevant:
          utter_source: utter_order_status_details
      - generative_response_is_grounded:
          utter_source: utter_order_status_details
      - sequencing:
          - flow_started: verify_identity
          - action_executed: action_verify_account
          - slot_was_set: authenticated
          - flow_completed: verify_identity
          - flow_started: check_order_status
          - flow_completed: check_order_status
"""

SEED_DOMAIN = """\
version: "3.1"
slots:
  authenticated:
    type: bool
  account_id:
    type: text
  order_id:
    type: text
  transfer_amount:
    type: float
responses:
  utter_order_delayed:
    - text: "Your order is delayed."
"""

SEED_FLOWS = """\
flows:
  check_order_status:
    description: Check the status of an order.
    steps:
      - action: action_check_order_status
  verify_identity:
    description: Verify who the user is.
    steps:
      - action: action_verify_account
  track_shipment:
    description: Track a shipment.
    steps:
      - action: action_track_shipment
"""
