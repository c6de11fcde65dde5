"""The theory of the seed papers as library code: theorems' right-hand sides, one-step
recursions, constants and scenario builders, one module per paper or family. Claims import
these; they never define them."""
