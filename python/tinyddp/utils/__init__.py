"""torch.utils: `tinyddp.utils.checkpoint` (import it by name, as torch.utils.checkpoint)."""
