"""Stand-in for torchtext (discontinued; no release installs beside a current
PyTorch). J&W's vectorizer imports `pretrained_aliases` to download fastText
or GloVe vectors; the reference run gives the vectors itself, so none is
listed."""
