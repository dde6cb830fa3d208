"""Numbers the papers publish, with where each comes from (ALGORITHMS.md)."""

# Jain & Wallace 2019, BiLSTM + tanh attention, fastText vectors; test split.
# HEAD `graph_outputs` of successar/AttentionExplanation (ALGORITHMS.md §B.6).
JAIN_WALLACE_TEST = {
    'sst': {'accuracy': 0.808, 'f1_pos': 0.784, 'roc_auc': 0.902},
    'imdb': {'accuracy': 0.898, 'f1_pos': 0.896, 'roc_auc': 0.960},
    # Only F1 is published for 20 Newsgroups: J&W's paper as quoted in
    # Wiegreffe & Pinter's Table 2 ("reported"), §B.6.
    '20news': {'f1_pos': 0.94},
}
# The same code run once more (commit 6af8947, test-set selection): the
# run-to-run spread to expect (§B.6).
JAIN_WALLACE_OTHER_RUN = {
    'sst': {'accuracy': 0.820, 'f1_pos': 0.806},
    'imdb': {'accuracy': 0.905},
}

# J&W's data after their protocol (ALGORITHMS.md §A.1, HEAD version):
# split -> (documents, negatives, positives); vocabulary includes the 4 specials.
JAIN_WALLACE_SPLITS = {
    'sst': {'train': (6355, 3034, 3321), 'dev': (821, 397, 424), 'test': (1725, 863, 862), 'vocab': 13826},
    'imdb': {'test': (4356, 2184, 2172), 'vocab': 12487},
    '20news': {'test': (357, 179, 178), 'vocab': 6515},
    'agnews': {'test': (3798, 1900, 1898), 'vocab': 13715},
}
