"""torchtext.vocab.pretrained_aliases, empty: no download happens here."""

pretrained_aliases: dict = {}
