"""Numbers the papers publish, with where each comes from."""

# Jain & Wallace 2019, BiLSTM + tanh attention, fastText vectors; test split.
# HEAD `graph_outputs` of successar/AttentionExplanation.
JAIN_WALLACE_TEST = {
    'sst': {'accuracy': 0.808, 'f1_pos': 0.784, 'roc_auc': 0.902},
    'imdb': {'accuracy': 0.898, 'f1_pos': 0.896, 'roc_auc': 0.960},
    # Only F1 is published for 20 Newsgroups: J&W's paper as quoted in
    # Wiegreffe & Pinter's Table 2 ("reported").
    '20news': {'f1_pos': 0.94},
    # QA and NLI (`graph_outputs/evaluate/{babi_1,babi_2,babi_3,snli}+lstm+tanh.json`).
    'babi1': {'accuracy': 1.000}, 'babi2': {'accuracy': 0.653}, 'babi3': {'accuracy': 0.643},
    'snli': {'accuracy': 0.7788},
}
# The same code run once more (commit 6af8947, test-set selection): the
# run-to-run spread to expect.
JAIN_WALLACE_OTHER_RUN = {
    'sst': {'accuracy': 0.820, 'f1_pos': 0.806},
    'imdb': {'accuracy': 0.905},
}

# J&W's data after their protocol (their `preprocess/` and `Trainers/DatasetBC.py` at HEAD; SST's also W&P Table 1):
# split -> (documents, negatives, positives); vocabulary includes the 4 specials.
JAIN_WALLACE_SPLITS = {
    'sst': {'train': (6355, 3034, 3321), 'dev': (821, 397, 424), 'test': (1725, 863, 862), 'vocab': 13826},
    'imdb': {'test': (4356, 2184, 2172), 'vocab': 12487},
    '20news': {'test': (357, 179, 178), 'vocab': 6515},
    'agnews': {'test': (3798, 1900, 1898), 'vocab': 13715},
}

# J&W's analyses, BiLSTM + tanh, test split (HEAD
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
    # QA and NLI: `CorrStats_kendalltau/{babi_1,babi_2,babi_3,snli}+lstm+tanh.csv` (rows ag = α~LOO,
    # al = α~gradient, gl = gradient~LOO, as for the classification rows), overall only: with
    # 36 answer classes J&W split by predicted class only for SNLI (their per-class rows are
    # not carried here).
    'babi1': {'overall': {'attention_gradient': (0.2508, 0.1557, 0.55), 'attention_loo': (0.1604, 0.1412, 0.28),
                          'gradient_loo': (0.4986, 0.1582, 0.84)}},
    'babi2': {'overall': {'attention_gradient': (-0.0168, 0.1372, 0.27), 'attention_loo': (-0.0136, 0.1341, 0.27),
                          'gradient_loo': (0.4367, 0.1881, 0.91)}},
    'babi3': {'overall': {'attention_gradient': (0.2390, 0.1125, 0.87), 'attention_loo': (0.2555, 0.1035, 0.89),
                          'gradient_loo': (0.4990, 0.1706, 0.97)}},
    'snli': {'overall': {'attention_gradient': (0.3138, 0.2164, 0.37), 'attention_loo': (0.2895, 0.2373, 0.35),
                         'gradient_loo': (0.2402, 0.2198, 0.25)}},
}
# The same code's earlier run (J&W's repository at commit 6af8947,
# `graph_outputs/GradientPval/` and `pyxc-pyc_pval/`), BiLSTM + tanh: mean τ
# by predicted class (neg, pos), beside HEAD's per-class means above.
JAIN_WALLACE_OTHER_RUN_TAU = {
    'sst': {'attention_gradient': (0.395, 0.385), 'attention_loo': (0.336, 0.334)},
    'imdb': {'attention_gradient': (0.372, 0.368), 'attention_loo': (0.303, 0.308)},
}


def jain_wallace_run_to_run() -> float:
  """The largest difference in a class's mean τ between J&W's two runs of
  the same code (HEAD and commit 6af8947; 0.068, IMDB τ(α, grad), negative
  class): how far J&W's own published τ move between runs."""
  return max(abs(other[i] - JAIN_WALLACE_TAU[dataset][cls][pair][0])
             for dataset, pairs in JAIN_WALLACE_OTHER_RUN_TAU.items() for pair, other in pairs.items()
             for i, cls in enumerate(('neg', 'pos')))


# J&W's own two runs differ by up to this much in mean τ (`jain_wallace_run_to_run`, rounded).
JAIN_WALLACE_TAU_SPREAD = 0.07
# Adversarial max JSD within ε = 0.05, by predicted class: (mean, fraction > 0.5).
JAIN_WALLACE_ADVERSARIAL = {
    'sst': {'neg': (0.48, 0.44), 'pos': (0.49, 0.47)},
    'imdb': {'neg': (0.58, 0.91), 'pos': (0.57, 0.86)},
}
# Range of the per-instance permutation medians |Δŷ| across max-attention
# bins (read off J&W's violin plots; no csv is published).
JAIN_WALLACE_PERMUTATION_RANGE = {'sst': (0.03, 0.11), 'imdb': (0.08, 0.40)}


# Jain & Wallace's per-configuration numbers (test split, one run each): the
# csv / json files of `graph_outputs/` in successar/AttentionExplanation, HEAD
# 425a89a (regenerated in 752b779; `evaluate/*.json` last changed in 0dfca29
# or d74cab1, from the same models). τ: (mean, std, fraction p <= 0.05) from
# `CorrStats_kendalltau` (rows ag = α~LOO, al = α~gradient, gl = gradient~LOO,
# as `Trainers/PlottingBC.py::plot_correlation_between_grad_and_loo` fills them); None where J&W's mean is NaN (a constant importance
# vector in some document). `adversarial_max_jsd`: the mean max JSD by
# predicted class, read off the bar heights of their `eMaxJDS_Hist` svg (40
# bins of 0.0175: within ±0.009), not a published number — hence "≈".
# Keys: (dataset, encoder, attention).
JAIN_WALLACE_GRID = {
    ('sst', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (0.3512, 0.2109, 0.49), 'attention_loo': (0.2913, 0.1912, 0.36), 'gradient_loo': (0.6559, 0.1632, 0.91)},
        'test': {'accuracy': 0.8081, 'f1_pos': 0.7835, 'roc_auc': 0.9024},
        'adversarial_max_jsd': {'neg': 0.48, 'pos': 0.49}},
    ('sst', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.0735, 0.2049, 0.09), 'attention_loo': (0.0636, 0.2004, 0.07), 'gradient_loo': (0.7078, 0.1365, 0.94)},
        'test': {'accuracy': 0.8226, 'f1_pos': 0.8165, 'roc_auc': 0.8998},
        'adversarial_max_jsd': {'neg': 0.48, 'pos': 0.47}},
    ('sst', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.477, 0.1671, 0.75), 'attention_loo': (0.3517, 0.1745, 0.51), 'gradient_loo': (0.4879, 0.1759, 0.74)},
        'test': {'accuracy': 0.8232, 'f1_pos': 0.825, 'roc_auc': 0.9082},
        'adversarial_max_jsd': {'neg': 0.43, 'pos': 0.53}},
    ('sst', 'cnn', 'dot'): {'tau': {'attention_gradient': (0.2402, 0.1959, 0.25), 'attention_loo': (0.2152, 0.1929, 0.21), 'gradient_loo': (0.6357, 0.2094, 0.82)},
        'test': {'accuracy': 0.8122, 'f1_pos': 0.8051, 'roc_auc': 0.8953},
        'adversarial_max_jsd': {'neg': 0.45, 'pos': 0.44}},
    ('sst', 'average', 'tanh'): {'tau': {'attention_gradient': (0.6058, 0.2012, 0.85), 'attention_loo': (0.6226, 0.1547, 0.88), 'gradient_loo': (0.558, 0.2499, 0.73)},
        'test': {'accuracy': 0.807, 'f1_pos': 0.7995, 'roc_auc': 0.8948},
        'adversarial_max_jsd': {'neg': 0.47, 'pos': 0.49}},
    ('sst', 'average', 'dot'): {'tau': {'attention_gradient': (0.3473, 0.2169, 0.5), 'attention_loo': (0.314, 0.1751, 0.42), 'gradient_loo': (0.6608, 0.2361, 0.82)},
        'test': {'accuracy': 0.7994, 'f1_pos': 0.7773, 'roc_auc': 0.8956},
        'adversarial_max_jsd': {'neg': 0.44, 'pos': 0.44}},
    ('imdb', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (0.4372, 0.0609, 1.0), 'attention_loo': (0.3413, 0.0697, 0.99), 'gradient_loo': (0.5169, 0.0996, 1.0)},
        'test': {'accuracy': 0.8981, 'f1_pos': 0.896, 'roc_auc': 0.9604},
        'adversarial_max_jsd': {'neg': 0.58, 'pos': 0.57}},
    ('imdb', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.1223, 0.0626, 0.62), 'attention_loo': (0.0916, 0.0707, 0.45), 'gradient_loo': (0.6022, 0.1418, 1.0)},
        'test': {'accuracy': 0.8854, 'f1_pos': 0.8794, 'roc_auc': 0.955},
        'adversarial_max_jsd': {'neg': 0.59, 'pos': 0.57}},
    ('imdb', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.4516, 0.054, 1.0), 'attention_loo': (0.2948, 0.0572, 0.98), 'gradient_loo': (0.5131, 0.0689, 1.0)},
        'test': {'accuracy': 0.9006, 'f1_pos': 0.8979, 'roc_auc': 0.9622},
        'adversarial_max_jsd': {'neg': 0.6, 'pos': 0.6}},
    ('imdb', 'cnn', 'dot'): {'tau': {'attention_gradient': (0.3458, 0.0672, 0.99), 'attention_loo': (0.3647, 0.0662, 0.99), 'gradient_loo': (0.5952, 0.105, 1.0)},
        'test': {'accuracy': 0.8937, 'f1_pos': 0.8953, 'roc_auc': 0.9587},
        'adversarial_max_jsd': {'neg': 0.59, 'pos': 0.58}},
    ('imdb', 'average', 'tanh'): {'tau': {'attention_gradient': (0.6748, 0.0504, 1.0), 'attention_loo': (0.5763, 0.0984, 1.0), 'gradient_loo': (0.6394, 0.1867, 1.0)},
        'test': {'accuracy': 0.8827, 'f1_pos': 0.8822, 'roc_auc': 0.9445},
        'adversarial_max_jsd': {'neg': 0.61, 'pos': 0.61}},
    ('imdb', 'average', 'dot'): {'tau': {'attention_gradient': (None, None, 0.84), 'attention_loo': (0.2007, 0.0828, 0.87), 'gradient_loo': (None, None, 0.99)},
        'test': {'accuracy': 0.8659, 'f1_pos': 0.8731, 'roc_auc': 0.9449},
        'adversarial_max_jsd': {'neg': 0.55, 'pos': 0.59}},
    ('20news', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (0.1305, 0.2063, 0.48), 'attention_loo': (0.1229, 0.1892, 0.44), 'gradient_loo': (0.534, 0.1645, 0.99)},
        'test': {'accuracy': 0.9216, 'f1_pos': 0.9172, 'roc_auc': 0.9779},
        'adversarial_max_jsd': {'neg': 0.61, 'pos': 0.38}},
    ('20news', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.1316, 0.1563, 0.48), 'attention_loo': (0.0666, 0.1545, 0.38), 'gradient_loo': (0.499, 0.155, 0.99)},
        'test': {'accuracy': 0.9356, 'f1_pos': 0.9337, 'roc_auc': 0.9819},
        'adversarial_max_jsd': {'neg': 0.57, 'pos': 0.59}},
    ('20news', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.4465, 0.1254, 0.94), 'attention_loo': (0.3218, 0.1302, 0.85), 'gradient_loo': (0.5488, 0.1203, 0.97)},
        'test': {'accuracy': 0.9132, 'f1_pos': 0.9086, 'roc_auc': 0.9672},
        'adversarial_max_jsd': {'neg': 0.64, 'pos': 0.45}},
    ('20news', 'cnn', 'dot'): {'tau': {'attention_gradient': (None, None, 0.42), 'attention_loo': (0.1854, 0.1159, 0.61), 'gradient_loo': (None, None, 0.95)},
        'test': {'accuracy': 0.9384, 'f1_pos': 0.9375, 'roc_auc': 0.9744},
        'adversarial_max_jsd': {'neg': 0.56, 'pos': 0.56}},
    ('20news', 'average', 'tanh'): {'tau': {'attention_gradient': (0.7717, 0.0775, 1.0), 'attention_loo': (0.721, 0.1365, 0.99), 'gradient_loo': (0.6222, 0.197, 0.96)},
        'test': {'accuracy': 0.9132, 'f1_pos': 0.9091, 'roc_auc': 0.9686},
        'adversarial_max_jsd': {'neg': 0.68, 'pos': 0.44}},
    ('20news', 'average', 'dot'): {'tau': {'attention_gradient': (0.0358, 0.1673, 0.31), 'attention_loo': (-0.1754, 0.2297, 0.71), 'gradient_loo': (0.3522, 0.2966, 0.77)},
        'test': {'accuracy': 0.9272, 'f1_pos': 0.927, 'roc_auc': 0.9635},
        'adversarial_max_jsd': {'neg': 0.55, 'pos': 0.5}},
}


# Jain & Wallace's question-answering and NLI rows, the same files of the same
# commit (`graph_outputs/evaluate/<task>+<enc>+<attn>.json` and
# `CorrStats_kendalltau/...csv`, rows read as above): test accuracy and the
# three τ of each configuration, one run each. bAbI 2 + Average + tanh
# predicted one class ('9') for every test question. No adversarial or
# permutation numbers are published for these (svg figures only).
JAIN_WALLACE_QA_GRID = {
    ('babi1', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (0.2508, 0.1557, 0.55), 'attention_loo': (0.1604, 0.1412, 0.28), 'gradient_loo': (0.4986, 0.1582, 0.84)},
        'test': {'accuracy': 1.0}},
    ('babi1', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.437, 0.1552, 0.83), 'attention_loo': (0.4215, 0.1321, 0.8), 'gradient_loo': (0.4134, 0.1575, 0.78)},
        'test': {'accuracy': 0.998}},
    ('babi1', 'average', 'tanh'): {'tau': {'attention_gradient': (0.7174, 0.1185, 0.99), 'attention_loo': (0.7345, 0.0987, 0.99), 'gradient_loo': (0.6913, 0.1409, 0.99)},
        'test': {'accuracy': 0.436}},
    ('babi1', 'average', 'dot'): {'tau': {'attention_gradient': (0.7133, 0.136, 0.99), 'attention_loo': (0.8172, 0.135, 0.98), 'gradient_loo': (0.6838, 0.1471, 0.98)},
        'test': {'accuracy': 0.43}},
    ('babi1', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.2447, 0.141, 0.51), 'attention_loo': (0.1597, 0.1267, 0.23), 'gradient_loo': (0.3038, 0.1611, 0.65)},
        'test': {'accuracy': 0.887}},
    ('babi1', 'cnn', 'dot'): {'tau': {'attention_gradient': (0.1685, 0.125, 0.27), 'attention_loo': (0.1102, 0.128, 0.13), 'gradient_loo': (0.5482, 0.144, 0.93)},
        'test': {'accuracy': 0.889}},
    ('babi2', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (-0.0168, 0.1372, 0.27), 'attention_loo': (-0.0136, 0.1341, 0.27), 'gradient_loo': (0.4367, 0.1881, 0.91)},
        'test': {'accuracy': 0.653}},
    ('babi2', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.1696, 0.1468, 0.57), 'attention_loo': (0.2204, 0.1355, 0.68), 'gradient_loo': (0.28, 0.1135, 0.83)},
        'test': {'accuracy': 0.427}},
    ('babi2', 'average', 'tanh'): {'tau': {'attention_gradient': (0.6777, 0.0573, 1.0), 'attention_loo': (0.6466, 0.065, 1.0), 'gradient_loo': (0.4743, 0.058, 0.99)},
        'test': {'accuracy': 0.167}},
    ('babi2', 'average', 'dot'): {'tau': {'attention_gradient': (0.5995, 0.1787, 0.99), 'attention_loo': (0.8863, 0.0672, 1.0), 'gradient_loo': (0.5752, 0.1613, 0.99)},
        'test': {'accuracy': 0.314}},
    ('babi2', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.1805, 0.0787, 0.66), 'attention_loo': (0.1858, 0.0738, 0.71), 'gradient_loo': (0.3745, 0.1015, 0.98)},
        'test': {'accuracy': 0.333}},
    ('babi2', 'cnn', 'dot'): {'tau': {'attention_gradient': (0.1522, 0.0773, 0.53), 'attention_loo': (0.2437, 0.0618, 0.88), 'gradient_loo': (0.4135, 0.093, 0.99)},
        'test': {'accuracy': 0.34}},
    ('babi3', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (0.239, 0.1125, 0.87), 'attention_loo': (0.2555, 0.1035, 0.89), 'gradient_loo': (0.499, 0.1706, 0.97)},
        'test': {'accuracy': 0.643}},
    ('babi3', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.2994, 0.1478, 0.89), 'attention_loo': (0.3425, 0.1516, 0.92), 'gradient_loo': (0.3953, 0.1205, 0.97)},
        'test': {'accuracy': 0.515}},
    ('babi3', 'average', 'tanh'): {'tau': {'attention_gradient': (0.6073, 0.1274, 1.0), 'attention_loo': (0.7248, 0.0922, 1.0), 'gradient_loo': (0.5462, 0.1192, 1.0)},
        'test': {'accuracy': 0.32}},
    ('babi3', 'average', 'dot'): {'tau': {'attention_gradient': (0.4802, 0.1369, 1.0), 'attention_loo': (0.7483, 0.0665, 1.0), 'gradient_loo': (0.4114, 0.1459, 0.98)},
        'test': {'accuracy': 0.316}},
    ('babi3', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.18, 0.058, 0.91), 'attention_loo': (0.1782, 0.0495, 0.91), 'gradient_loo': (0.4652, 0.0796, 1.0)},
        'test': {'accuracy': 0.294}},
    ('babi3', 'cnn', 'dot'): {'tau': {'attention_gradient': (0.0144, 0.0538, 0.12), 'attention_loo': (0.0816, 0.053, 0.44), 'gradient_loo': (0.5248, 0.1257, 1.0)},
        'test': {'accuracy': 0.288}},
    ('snli', 'bilstm', 'tanh'): {'tau': {'attention_gradient': (0.3138, 0.2164, 0.37), 'attention_loo': (0.2895, 0.2373, 0.35), 'gradient_loo': (0.2402, 0.2198, 0.25)},
        'test': {'accuracy': 0.7788}},
    ('snli', 'bilstm', 'dot'): {'tau': {'attention_gradient': (0.1157, 0.2346, 0.11), 'attention_loo': (0.1561, 0.2377, 0.13), 'gradient_loo': (0.3098, 0.2085, 0.35)},
        'test': {'accuracy': 0.7659}},
    ('snli', 'average', 'tanh'): {'tau': {'attention_gradient': (0.5822, 0.1852, 0.8), 'attention_loo': (0.5934, 0.1892, 0.81), 'gradient_loo': (0.5866, 0.2183, 0.78)},
        'test': {'accuracy': 0.7501}},
    ('snli', 'average', 'dot'): {'tau': {'attention_gradient': (0.5003, 0.1816, 0.7), 'attention_loo': (0.5274, 0.1795, 0.75), 'gradient_loo': (0.4341, 0.2234, 0.59)},
        'test': {'accuracy': 0.7533}},
    ('snli', 'cnn', 'tanh'): {'tau': {'attention_gradient': (0.2348, 0.2356, 0.25), 'attention_loo': (0.264, 0.2274, 0.29), 'gradient_loo': (0.3397, 0.2205, 0.43)},
        'test': {'accuracy': 0.7749}},
    ('snli', 'cnn', 'dot'): {'tau': {'attention_gradient': (0.2706, 0.2216, 0.3), 'attention_loo': (0.2883, 0.2124, 0.32), 'gradient_loo': (0.2939, 0.2277, 0.35)},
        'test': {'accuracy': 0.7792}},
}

# Wiegreffe & Pinter 2019, Table 2 (F1 of the positive class, test split):
# J&W's number as W&P quote it, W&P's rerun of J&W's BiLSTM + tanh model
# ("attention") and the same model with attention frozen to uniform
# (W&P §3.2; the clinical datasets are not part of attn-jax).
WIEGREFFE_PINTER_TABLE2 = {
    'sst': {'jw_reported': 0.81, 'attention': 0.831, 'uniform': 0.822},
    'imdb': {'jw_reported': 0.88, 'attention': 0.902, 'uniform': 0.879},
    'agnews': {'jw_reported': 0.96, 'attention': 0.964, 'uniform': 0.960},
    '20news': {'jw_reported': 0.94, 'attention': 0.942, 'uniform': 0.934},
}
# Wiegreffe & Pinter 2019, Table 3 (F1): the diagnostic MLP (token-wise
# tanh projection, no context) with each guide's attention imposed
# (W&P §3.4). Keys are the `guides` experiment's guide names;
# 'adversary' is W&P's "ADVERSARY (4)" (the W&P §4 model-consistent adversary).
WIEGREFFE_PINTER_TABLE3 = {
    'sst': {'uniform': 0.812, 'trained_mlp': 0.817, 'base': 0.824, 'adversary': 0.592},
    'imdb': {'uniform': 0.863, 'trained_mlp': 0.888, 'base': 0.905, 'adversary': 0.700},
}


# Meister et al. 2021 (Tables 1–6). Models are '<encoder>_<projection>'
# (BiLSTM with additive/tanh attention, Transformer with dot attention).
# Table 1: mean ± std normalised entropy of g_{h_p}(x).
MEISTER_TABLE1 = {
    ('imdb', 'bilstm_softmax'): (0.71, 0.09), ('20news', 'bilstm_softmax'): (0.75, 0.12),
    ('sst', 'bilstm_softmax'): (0.93, 0.05),
    ('imdb', 'bilstm_sparsemax'): (0.72, 0.10), ('20news', 'bilstm_sparsemax'): (0.68, 0.12),
    ('sst', 'bilstm_sparsemax'): (0.91, 0.07),
    ('imdb', 'transformer_softmax'): (0.76, 0.08), ('20news', 'transformer_softmax'): (0.48, 0.06),
    ('sst', 'transformer_softmax'): (0.73, 0.09),
    ('imdb', 'transformer_sparsemax'): (0.72, 0.09), ('20news', 'transformer_sparsemax'): (0.46, 0.06),
    ('sst', 'transformer_sparsemax'): (0.63, 0.08),
}
# Table 2: correlation between sparsegen λ and H̃(g_ŷ(x)), by encoder.
MEISTER_TABLE2 = {
    ('imdb', 'bilstm'): -0.935, ('20news', 'bilstm'): -0.675, ('sst', 'bilstm'): -0.866,
    ('imdb', 'transformer'): -0.830, ('20news', 'transformer'): -0.409, ('sst', 'transformer'): -0.810,
}
# Table 3: test accuracy of the softmax baselines, by encoder.
MEISTER_TABLE3 = {
    ('imdb', 'transformer'): 0.89, ('imdb', 'bilstm'): 0.90,
    ('20news', 'transformer'): 0.91, ('20news', 'bilstm'): 0.91,
    ('sst', 'transformer'): 0.79, ('sst', 'bilstm'): 0.82,
}
# Table 5: adversary JSD, accuracy and accuracy change against the baseline.
MEISTER_TABLE5 = {
    ('imdb', 'bilstm', 'frozen'): (0.67, 0.76, -0.14), ('sst', 'bilstm', 'frozen'): (0.62, 0.76, -0.06),
    ('20news', 'bilstm', 'frozen'): (0.67, 0.78, -0.13),
    ('imdb', 'bilstm', 'unfrozen'): (0.67, 0.90, -0.00), ('sst', 'bilstm', 'unfrozen'): (0.61, 0.82, -0.00),
    ('20news', 'bilstm', 'unfrozen'): (0.67, 0.91, -0.00),
    ('imdb', 'transformer', 'frozen'): (0.62, 0.71, -0.18),
    ('sst', 'transformer', 'frozen'): (0.57, 0.76, -0.03),
    ('20news', 'transformer', 'frozen'): (0.62, 0.87, -0.03),
    ('imdb', 'transformer', 'unfrozen'): (0.64, 0.87, -0.02),
    ('sst', 'transformer', 'unfrozen'): (0.57, 0.78, -0.01),
    ('20news', 'transformer', 'unfrozen'): (0.62, 0.92, 0.01),
}
# Table 6: mean ± std Kendall τ of attention with g_ŷ(x), D_ŷ(x), g_ŷ(I), D_ŷ(I).
_T6 = {
    'bilstm_softmax': {'imdb': ((0.36, 0.12), (0.31, 0.08), (0.77, 0.05), (0.79, 0.05)),
                       '20news': ((0.24, 0.24), (0.17, 0.17), (0.78, 0.15), (0.70, 0.19)),
                       'sst': ((0.25, 0.28), (0.35, 0.18), (0.80, 0.13), (0.49, 0.17))},
    'bilstm_sparsemax': {'imdb': ((0.31, 0.08), (0.25, 0.06), (0.98, 0.02), (0.98, 0.02)),
                         '20news': ((0.25, 0.13), (0.23, 0.09), (0.98, 0.06), (0.99, 0.01)),
                         'sst': ((0.45, 0.13), (0.34, 0.15), (0.97, 0.06), (0.98, 0.04))},
    'transformer_softmax': {'imdb': ((0.67, 0.08), (0.20, 0.10), (0.76, 0.04), (0.10, 0.07)),
                            '20news': ((0.54, 0.11), (0.05, 0.10), (0.62, 0.13), (0.05, 0.11)),
                            'sst': ((0.72, 0.11), (0.33, 0.20), (0.89, 0.07), (0.16, 0.18))},
    'transformer_sparsemax': {'imdb': ((0.44, 0.08), (0.21, 0.09), (0.92, 0.05), (0.19, 0.09)),
                              '20news': ((0.47, 0.10), (0.14, 0.15), (0.76, 0.15), (0.15, 0.16)),
                              'sst': ((0.67, 0.12), (0.30, 0.23), (0.88, 0.11), (0.25, 0.23))},
}
MEISTER_TABLE6 = {(dataset, model): dict(zip(('g_y_x', 'd_y_x', 'g_y_i', 'd_y_i'), cells))
                  for model, by_dataset in _T6.items() for dataset, cells in by_dataset.items()}


# Serrano & Smith 2019. Models are S&S's names
# (HAN/FLAN × rnn/conv/noenc). Table 3: test accuracy (%) by dataset.
SERRANO_SMITH_TABLE3 = {
    'yahoo': {'HANrnn': 74.6, 'HANconv': 72.8, 'HANnoenc': 73.1, 'FLANrnn': 75.5, 'FLANconv': 73.1, 'FLANnoenc': 72.3},
    'imdb': {'HANrnn': 50.3, 'HANconv': 48.9, 'HANnoenc': 46.1, 'FLANrnn': 49.1, 'FLANconv': 48.2, 'FLANnoenc': 45.4},
    'amazon': {'HANrnn': 56.9, 'HANconv': 55.3, 'HANnoenc': 51.2, 'FLANrnn': 56.6, 'FLANconv': 54.4, 'FLANnoenc': 50.2},
    'yelp': {'HANrnn': 63.0, 'HANconv': 61.0, 'HANnoenc': 58.6, 'FLANrnn': 62.3, 'FLANconv': 60.7, 'FLANnoenc': 58.2},
}
# Table 2 (HANrnn; % of test instances with more than one sentence): erasing
# i* flips and erasing r flips / i* only / r only / neither.
SERRANO_SMITH_TABLE2 = {
    'yahoo': (0.5, 8.7, 1.3, 89.6), 'imdb': (2.2, 12.2, 1.4, 84.2),
    'amazon': (2.7, 7.6, 2.7, 87.1), 'yelp': (1.5, 8.9, 1.9, 87.7),
}
# §5 (and Fig. 5): "for every model with an encoder, gradient beats attention
# on at least 1.6 times as many instances as the reverse".
SERRANO_SMITH_GRADIENT_RATIO = 1.6
# S&S's data closest to each dataset here (which published column a row sits beside).
SERRANO_SMITH_CLOSEST = {'imdb_ratings': 'imdb', '20news_topics': 'yahoo'}
# App. A.3, Figures 12–13: the single-weight test on the top item of the
# gradient ranking finds fewer flips (the "yes" row: i* flips) than on the
# top-attended item "in 14 out of our 24 models"; on the top item of the
# gradient × attention ranking, more in all 24 (models × datasets).
SERRANO_SMITH_FIG12_FEWER = (14, 24)
SERRANO_SMITH_FIG13_MORE = (24, 24)
# App. A.3, Figure 11: the attention mass zeroed by the first flip under the
# gradient and product rankings is "often shifted down by around 0.25 or
# more" from the attention ranking's.
SERRANO_SMITH_FIG11_SHIFT = 0.25
