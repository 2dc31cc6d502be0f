"""String hashing is randomised per interpreter (PYTHONHASHSEED unset): set order changes run to run."""

print("hash:", hash("epoch"))
print("set order:", list({"loss", "accuracy", "epoch", "lr", "step", "batch", "val_loss", "val_accuracy"}))
