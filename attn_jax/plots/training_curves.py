"""Per-epoch train loss and selection-split metrics of a training run."""

from attn_jax.plots import figures


def plot_training_curves(history: list[dict], split: str, selected_epoch: int, stem: str) -> list[str]:
  """history: the records of metrics.jsonl. Writes `<stem>.{png,svg}`."""
  epochs = [r['epoch'] for r in history]
  fig, (left, right) = figures.new_figure(1, 2, figsize=(9, 3.2))
  binary = f'{split}_roc_auc' in history[0]
  loss = 'BCE' if binary else 'cross-entropy'
  left.plot(epochs, [r['train_loss'] for r in history], marker='o',
            label=f'train (weighted {loss})' if binary else f'train ({loss})')
  left.plot(epochs, [r[f'{split}_loss'] for r in history], marker='o', label=f'{split} ({loss})')
  left.set_xlabel('epoch')
  left.set_ylabel('loss per example')
  left.legend()
  for key in ('accuracy', 'f1_pos', 'roc_auc') if binary else ('accuracy', 'macro_f1'):
    right.plot(epochs, [r[f'{split}_{key}'] for r in history], marker='o', label=key)
  right.axvline(selected_epoch, color='grey', linestyle=':', label='selected')
  right.set_xlabel('epoch')
  right.set_ylabel(split)
  right.legend()
  fig.tight_layout()
  return figures.save(fig, stem)
