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

# J&W's analyses, BiLSTM + tanh, test split (ALGORITHMS.md §B.6; HEAD
# graph_outputs). τ: (mean, std, fraction with p <= 0.05) over documents.
JAIN_WALLACE_TAU = {
    'sst': {'overall': {'attention_gradient': (0.351, 0.211, 0.49), 'attention_loo': (0.291, 0.191, 0.36),
                        'gradient_loo': (0.656, 0.163, 0.91)},
            'neg': {'attention_gradient': (0.34, 0.21, 0.48), 'attention_loo': (0.27, 0.19, 0.33)},
            'pos': {'attention_gradient': (0.36, 0.21, 0.49), 'attention_loo': (0.32, 0.19, 0.40)}},
    'imdb': {'overall': {'attention_gradient': (0.437, 0.061, 1.00), 'attention_loo': (0.341, 0.070, 0.99),
                         'gradient_loo': (0.517, 0.100, 1.00)},
             'neg': {'attention_gradient': (0.44, 0.06, 1.00), 'attention_loo': (0.34, 0.07, 1.00)},
             'pos': {'attention_gradient': (0.43, 0.06, 1.00), 'attention_loo': (0.34, 0.07, 0.99)}},
}
# J&W's own two runs differ by up to this much in mean τ (§B.6).
JAIN_WALLACE_TAU_SPREAD = 0.07
# Adversarial max JSD within ε = 0.05, by predicted class: (mean, fraction > 0.5).
JAIN_WALLACE_ADVERSARIAL = {
    'sst': {'neg': (0.48, 0.44), 'pos': (0.49, 0.47)},
    'imdb': {'neg': (0.58, 0.91), 'pos': (0.57, 0.86)},
}
# Range of the per-instance permutation medians |Δŷ| across max-attention
# bins (read off J&W's violin plots; no csv is published).
JAIN_WALLACE_PERMUTATION_RANGE = {'sst': (0.03, 0.11), 'imdb': (0.08, 0.40)}
