"""A serving check that only evaluates a compiled model: evaluate is its first inference."""
from _stack_lab import mlp, regression, seed, show, truth

seed()
x, y = regression()
model = mlp()
model.compile(optimizer="adam", loss="mse")
loss = model.evaluate(x, y, batch_size=64, verbose=0)
truth("first_inference_end")
for _ in range(3):
    model.evaluate(x, y, batch_size=64, verbose=0)
show("loss", float(loss))
