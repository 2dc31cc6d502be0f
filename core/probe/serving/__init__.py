"""The serving warm-up mode: a TF Serving warm-up file written from the inputs a model run
feeds, or checked by replaying it (serving_warmup.py, warmup_file.py, warmup_replay.py,
prediction_log.py). It stands on the model subject's loading and calling. Nothing is imported here."""
