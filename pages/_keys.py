"""Keys for the review form (issue 28), as Label Studio and Argilla annotators know them: 1-7 pick a label
for the current turn (or, last, for the whole conversation) and move to the next one; J and K move down and
up; the current one is outlined. Streamlit has shortcuts for buttons only, not for a segmented control's
options, so one small constant script listens for keys and clicks the option's own button.

The script carries no data: it finds the controls by the class Streamlit gives a widget's key (`tv:` for a
turn's label, `cv:` for the conversation's), installs itself once per browser tab, and leaves keys alone
while a text field has the focus or a modifier is held (Ctrl+Enter saves, Alt+N skips)."""

from __future__ import annotations

from pages._common import run_script

# Streamlit's class for a widget keyed "tv:..." is "st-key-tv-..." (every character but letters, digits,
# '_' and '-' becomes '-').
_SCRIPT = """
(() => {
  if (window.__evalcoreReviewKeys) return;
  window.__evalcoreReviewKeys = true;
  const STOPS = '[class*="st-key-tv-"], [class*="st-key-cv-"]';
  const style = document.createElement('style');
  style.textContent = '[data-ec-current] { outline: 2px solid #ff4b4b; outline-offset: 6px; '
    + 'border-radius: 0.5rem; }';
  document.head.appendChild(style);
  let at = 0;
  let owner = '';
  const stops = () => Array.from(document.querySelectorAll(STOPS));
  const keyOf = (el) => Array.from(el.classList).find((c) => c.startsWith('st-key-')) || '';
  const chosen = (el) => el.querySelector('button[aria-checked="true"]') !== null;
  function sync() {
    const list = stops();
    if (!list.length) return list;
    if (keyOf(list[0]) !== owner) {  /* another conversation opened: start at its first unmarked turn */
      owner = keyOf(list[0]);
      const free = list.findIndex((el) => !chosen(el));
      at = free < 0 ? 0 : free;
    }
    at = Math.min(at, list.length - 1);
    list.forEach((el, i) => el.toggleAttribute('data-ec-current', i === at));
    return list;
  }
  let pending = false;
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; sync(); });
  }).observe(document.body, { childList: true, subtree: true });
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))) {
      return;
    }
    const list = sync();
    if (!list.length) return;
    const code = event.code || '';
    const digit = /^(Digit|Numpad)[1-9]/.test(code) ? Number(code.slice(-1)) : 0;
    const key = (event.key || '').toLowerCase();
    if (digit) {
      /* the options' buttons only (they say whether they are chosen): a label's help icon is a button too */
      const button = list[at].querySelectorAll('button[aria-checked]')[digit - 1];
      if (!button) return;
      if (button.getAttribute('aria-checked') !== 'true') button.click();
      at = Math.min(at + 1, list.length - 1);
    } else if (key === 'j') {
      at = Math.min(at + 1, list.length - 1);
    } else if (key === 'k') {
      at = Math.max(at - 1, 0);
    } else {
      return;
    }
    event.preventDefault();
    list.forEach((el, i) => el.toggleAttribute('data-ec-current', i === at));
    list[at].scrollIntoView({ block: 'center' });
  });
  sync();
})();
"""


def review_keys() -> None:
    """Install the review form's keys in this browser tab (once; later calls change nothing)."""
    run_script(_SCRIPT)


def with_key(text: str, key: str) -> str:
    """A choice's words with its key, as the option's button shows them (the key in a grey chip)."""
    return f"{text} :gray-badge[{key}]"
