"""Is attn-jax's training step J&W's? One epoch of SST BiLSTM + tanh (or
`--encoder=cnn|average`, tanh attention) from the
same initial weights on the same batches (attn-jax's), trained by attn-jax's
step and by PyTorch with J&W's three Adam(amsgrad) groups on the PyTorch model
of benchmarks/jain_wallace_torch.py, then the dev ROC-AUC of each and the largest
difference between the two models' parameters. With today's
defaults both models have PyTorch's two LSTM biases, both trained; with
`--config.model.lstm_biases=1` semantics (attn-jax before 2026-11-26) the
PyTorch model's recurrent bias is frozen at zero so that the two models match.

    python benchmarks/jain_wallace_first_epoch.py   # prints the loss every 50 steps and both dev ROC-AUCs
    python benchmarks/jain_wallace_first_epoch.py --encoder=cnn --attention=tanh

Measured 2026-11-26 (CPU), one bias then: 0.8658 and 0.8658; J&W's own code on the same
inputs reaches 0.901 / 0.886 after its first epoch (seeds 0, 1;
results/jw_reference/diagnostics/sst_bilstm_tanh_seed0_dev_by_epoch.json).
"""
import argparse, sys, numpy as np, torch, jax, jax.numpy as jnp
from sklearn.metrics import roc_auc_score
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jain_wallace_torch
from attn_jax import config as config_lib
from attn_jax.models import build_model
from attn_jax.data.dataset import load_dataset
from attn_jax.workdirs.initial_params import pretrained_matrix
from attn_jax.training import optimizer as optimizer_lib, step as step_lib
torch.set_num_threads(1)
parser = argparse.ArgumentParser()
parser.add_argument('--encoder', default='bilstm', choices=['bilstm', 'cnn', 'average'])
parser.add_argument('--save', default=None, help='write the numbers printed to this JSON file')
args = parser.parse_args()
cfg = config_lib.default_config('sst', args.encoder)
cfg.model.attention = 'tanh'  # the PyTorch model (jain_wallace_torch) has tanh attention
ds = load_dataset(cfg.data)
model = build_model(cfg.model, len(ds.vocab))
params = model.init(jax.random.PRNGKey(0))
matrix, _ = pretrained_matrix(cfg, ds, lambda _: None)
params = {**params, 'embedding': {'table': jnp.asarray(matrix)}}
tm = jain_wallace_torch.from_attn_jax(params).train()
for n, p in tm.named_parameters():
  if 'bias_hh' in n and cfg.model.lstm_biases == 1: p.requires_grad_(False)
g = lambda pre: [p for n, p in tm.named_parameters() if any(n.startswith(x) for x in pre) and p.requires_grad]
opts = [torch.optim.Adam(g(('embedding', 'encoder')), lr=1e-3, weight_decay=1e-5, amsgrad=True),
        torch.optim.Adam(g(('projection', 'v.')), lr=1e-3, weight_decay=0, amsgrad=True),
        torch.optim.Adam(g(('output',)), lr=1e-3, weight_decay=1e-5, amsgrad=True)]
tx = optimizer_lib.make_optimizer(cfg.train)
state = step_lib.init_state(tx, params)
step = jax.jit(step_lib.make_train_step(model, tx))
from attn_jax.data import batching
longest = max(len(s) for sp in ds.splits.values() for s in sp.sequences)
bk = batching.bucket_lengths(longest)
crit = torch.nn.BCEWithLogitsLoss(reduction='none')
pw = ds.pos_weight
def dev_auc_torch():
  tm.eval(); ps=[]; ys=[]
  with torch.no_grad():
    for b in batching.eval_batches(ds.splits['dev'].sequences, ds.splits['dev'].labels, 32, bk):
      t, l, rows = jain_wallace_torch.as_torch(b); ps.append(torch.sigmoid(tm(t, l)).numpy()); ys.append(b.labels[rows])
  tm.train(); return roc_auc_score(np.concatenate(ys), np.concatenate(ps))
def dev_auc_jax(p):
  ps=[]; ys=[]
  for b in batching.eval_batches(ds.splits['dev'].sequences, ds.splits['dev'].labels, 32, bk):
    rows = b.index >= 0
    out = model.forward(p, jnp.asarray(b.tokens), jnp.asarray(b.lengths)).probs
    ps.append(np.asarray(out)[rows]); ys.append(b.labels[rows])
  return roc_auc_score(np.concatenate(ys), np.concatenate(ps))
batches = batching.train_batches(ds.splits['train'].sequences, ds.splits['train'].labels, 32, bk, pw, 0, 0)
losses = []
for i, b in enumerate(batches):
  state, loss = step(state, b)
  t, l, rows = jain_wallace_torch.as_torch(b)
  y = torch.tensor(b.labels[rows]); w = torch.tensor(b.weights[rows])
  tl = (crit(tm(t, l), y) * w).sum()
  for o in opts: o.zero_grad()
  tl.backward()
  for o in opts: o.step()
  if i % 50 == 0:
    losses.append([i, float(loss), float(tl.detach())])
    print(*losses[-1], flush=True)
auc_torch, auc_jax = dev_auc_torch(), dev_auc_jax(state.params)
print('after epoch 1: dev ROC torch', auc_torch, 'attn-jax', auc_jax, 'pos_weight', pw)
back = jain_wallace_torch.from_attn_jax(state.params)  # attn-jax's trained params in the PyTorch model's names
ours_now, theirs_now = dict(back.named_parameters()), dict(tm.named_parameters())
worst = max(((n, float((ours_now[n] - theirs_now[n]).detach().abs().max())) for n in theirs_now),
            key=lambda x: x[1])
print('largest parameter difference after one epoch:', worst)
if args.save:
  import json
  with open(args.save, 'w') as f:
    json.dump({'dataset': 'sst', 'encoder': args.encoder, 'attention': 'tanh', 'lstm_biases': cfg.model.lstm_biases,
               'dev_roc_auc': {'pytorch_jw_optimisers': auc_torch, 'attn_jax': auc_jax},
               'largest_parameter_difference': worst, 'loss_every_50_steps': losses,
               'command': f'python benchmarks/jain_wallace_first_epoch.py --encoder={args.encoder} --save={args.save}'},
              f, indent=1)
