"""Data: tfds builders of the original files, the J&W protocol, vocabulary, batches."""
