"""Three PyTorch operations for `memhier trace capture` on an unmodified framework program: an elementwise add, an
index_select gather and a transpose made contiguous. Sizes are fixed so the captured traces are comparable run to run."""
import torch

torch.manual_seed(0)
n = 1 << 20
a = torch.rand(n, device="cuda")
b = torch.rand(n, device="cuda")
c = a + b
idx = torch.randint(0, n, (n // 4,), device="cuda")
g = torch.index_select(a, 0, idx)
m = torch.rand(2048, 2048, device="cuda")
t = m.t().contiguous()
torch.cuda.synchronize()
assert torch.allclose(c, a.cpu().cuda() + b), "add"
assert torch.equal(g, a[idx]), "index_select"
assert torch.equal(t, m.t()), "transpose"
print("torch_ops: add, index_select, transpose().contiguous() checked")
