"""Statistics every stage may use (calibration of a judge against gold labels): pure functions on numbers,
no store and no model. It sits just above `models/`, so generators, review and reports share one copy."""
