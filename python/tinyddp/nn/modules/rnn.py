"""torch.nn.RNN, LSTM and GRU, and their one-step cells, composed from the engine's differentiable ops (linear,
sigmoid, tanh, stack, cat): the gradients come from the graph, so higher order works too.

T = time steps, B = batch, I = input_size, H = hidden_size, P = proj_size (H without projections), D = 2 if
bidirectional else 1, G = gates * H (4H LSTM, 3H GRU, H RNN).

Parameters carry 1.13's names, shapes and registration order (per layer, per direction: weight_ih, weight_hh,
bias_ih, bias_hh, weight_hr), and reset_parameters draws U(-1/sqrt(H), 1/sqrt(H)) over them in that order from the
default generator, so `torch.manual_seed(s)` gives PyTorch's weights bit for bit. Outputs and gradients agree with
1.13's fused CPU kernels to float rounding, not bitwise: each layer's input projection is one linear over all T
steps, then each step adds linear(h, weight_hh, bias_hh), but the elementwise gate math is separate
engine ops rather than one fused kernel. PackedSequence inputs run each step on its first batch_sizes[t] rows.
"""
import math
import numbers
import warnings

from tinyddp import _tensor
from tinyddp.nn import functional as F
from tinyddp.nn import init
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter
from tinyddp.nn.utils.rnn import PackedSequence

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(x_gates, h, c, w_hh, b_hh, w_hr):
    """One LSTM step. x_gates (B, 4H) = linear(x, w_ih, b_ih); h (B, P), c (B, H) -> (h', c')."""
    gates = x_gates + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(x_gates, h, w_hh, b_hh):
    """One GRU step. x_gates (B, 3H) = linear(x, w_ih, b_ih) in 1.13's gate order r, z, n; h (B, H) -> h'."""
    xr, xz, xn = x_gates.chunk(3, 1)
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + hn * r).tanh()
    return (h - n) * z + n


def _rnn_step(x_gates, h, w_hh, b_hh, relu):
    pre = x_gates + F.linear(h, w_hh, b_hh)
    return F.relu(pre) if relu else pre.tanh()


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout = float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size

        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [(f"weight_ih_l{layer}{suffix}", (gate_size, layer_input_size)),
                          (f"weight_hh_l{layer}{suffix}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [(f"bias_ih_l{layer}{suffix}", (gate_size,)),
                               (f"bias_hh_l{layer}{suffix}", (gate_size,))]
                if proj_size > 0:
                    shapes.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name, Parameter(_tensor.empty(shape, dtype=dtype)))
                self._flat_weights_names.extend(name for name, _ in shapes)
                self._all_weights.append([name for name, _ in shapes])
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: tinyddp keeps no flat cuDNN weight buffer."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer_weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda kind: getattr(self, f"{kind}_l{layer}{suffix}", None)   # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    # ---- input checks, as 1.13's check_forward_args ----
    def check_input(self, input, batch_sizes):
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, real_hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def _run(self, x, hidden, batch_sizes=None):
        """x (T, B, I), or a PackedSequence's data (sum of batch_sizes, I); hidden: (D*L, B, P) tensors, one per
        state (h, or h and c) -> output (T, B, D*P) (or packed data (sum, D*P)) and the final states stacked.
        Packed, step t updates the first batch_sizes[t] rows only: a finished sequence keeps its last state, and in
        the reverse direction a sequence starts from its initial state at its own last step."""
        num_directions = 2 if self.bidirectional else 1
        finals = [[] for _ in hidden]
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                k = layer * num_directions + direction
                state = [s[k] for s in hidden]
                x_gates = F.linear(x, w_ih, b_ih)   # the input projection of every step in one linear
                steps = x_gates.unbind(0) if batch_sizes is None else x_gates.split(batch_sizes)
                order = range(len(steps) - 1, -1, -1) if direction == 1 else range(len(steps))
                ys = [None] * len(steps)
                for t in order:
                    rows = steps[t].size(0)
                    current = [h if h.size(0) == rows else h[:rows] for h in state]
                    if self.mode == "LSTM":
                        new = _lstm_step(steps[t], current[0], current[1], w_hh, b_hh, w_hr)
                    elif self.mode == "GRU":
                        new = [_gru_step(steps[t], current[0], w_hh, b_hh)]
                    else:
                        new = [_rnn_step(steps[t], current[0], w_hh, b_hh, self.mode == "RNN_RELU")]
                    state = [n if h.size(0) == rows else _tensor.cat([n, h[rows:]], 0) for n, h in zip(new, state)]
                    ys[t] = new[0]
                for final, h in zip(finals, state):
                    final.append(h)
                outs.append(_tensor.stack(ys, 0) if batch_sizes is None else _tensor.cat(ys, 0))
            x = outs[0] if num_directions == 1 else _tensor.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [_tensor.stack(f, 0) for f in finals]

    def _zero_states(self, batch, dtype):
        """The initial states without hx: zeros (D*L, batch, P), and for LSTM the cell's (D*L, batch, H)."""
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        states = [_tensor.zeros(self.num_layers * num_directions, batch, real_hidden_size, dtype=dtype)]
        if self.mode == "LSTM":
            states.append(_tensor.zeros(self.num_layers * num_directions, batch, self.hidden_size, dtype=dtype))
        return states

    def _check_states(self, input, hidden, batch_sizes):
        """1.13's check_forward_args on the (batched) input and states, then the dtype its kernel would refuse."""
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        if self.mode == "LSTM":
            self.check_hidden_size(hidden[0], expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hidden[1], (expected[0], expected[1], self.hidden_size),
                                   "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(hidden[0], expected)
        if input.dtype != self._flat_weights[0].dtype:   # 1.13's kernel text
            raise RuntimeError("mat1 and mat2 must have the same dtype")

    def _forward_packed(self, packed, hx):
        lstm = self.mode == "LSTM"
        batch_sizes = [int(n) for n in packed.batch_sizes.tolist()]
        if hx is None:
            hidden = self._zero_states(batch_sizes[0], packed.data.dtype)
        else:
            hidden = list(hx) if lstm else [hx]
            if packed.sorted_indices is not None:   # the caller's batch order -> the packed order
                hidden = [h.index_select(1, packed.sorted_indices) for h in hidden]
        self._check_states(packed.data, hidden, packed.batch_sizes)
        output, finals = self._run(packed.data, hidden, batch_sizes)
        if packed.unsorted_indices is not None:
            finals = [f.index_select(1, packed.unsorted_indices) for f in finals]
        output = PackedSequence(output, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
        return output, (tuple(finals) if lstm else finals[0])

    def _forward(self, input, hx):
        """Shared by RNN, GRU and LSTM: hx is None, a tensor, or for LSTM an (h, c) pair."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        lstm = self.mode == "LSTM"
        # 1.13 checks the rank only after unsqueezing a non-3-D input: a 4-D one is reported as 5-D.
        batch_dim = 0 if self.batch_first else 1
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            hidden = self._zero_states(input.size(batch_dim), input.dtype)
        else:
            hidden = list(hx) if lstm else [hx]
            dims = [h.dim() for h in hidden]
            want = 3 if is_batched else 2
            if any(d != want for d in dims):
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                if lstm:
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({dims[0]}-D, {dims[1]}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {dims[0]}-D tensor")
            if not is_batched:
                hidden = [h.unsqueeze(1) for h in hidden]
        self._check_states(input, hidden, None)
        if self.batch_first:
            input = input.transpose(0, 1)
        output, finals = self._run(input, hidden)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            finals = [f.squeeze(1) for f in finals]
        return output, (tuple(finals) if lstm else finals[0])

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu), per layer and direction."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        # 1.13 reads nonlinearity as a keyword only: a fourth positional argument is num_layers' neighbour, bias.
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    """LSTM with 1.13's gate order i, f, g, o; with proj_size > 0, h = (o * tanh(c)) W_hr^T."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    """GRU with 1.13's gate order r, z, n: n = tanh(x_n + r * (h W_hn^T + b_hn)), h' = (1 - z) * n + z * h."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


# ---- cells ----
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_tensor.empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(_tensor.empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_tensor.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_tensor.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _prepare(self, input, hx, name, states):
        """The batched input and hidden states (a list), with 1.13's checks; is_batched to undo the unsqueeze."""
        if input.dim() not in (1, 2):
            raise AssertionError(f"{name}: Expected input to be 1-D or 2-D but received {input.dim()}-D tensor")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hidden = [_tensor.zeros(input.size(0), self.hidden_size, dtype=input.dtype) for _ in range(states)]
        else:
            hidden = list(hx) if states == 2 else [hx]
            if not is_batched:
                hidden = [h.unsqueeze(0) for h in hidden]
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for h in hidden:   # 1.13 names both of LSTMCell's states "hidden0"
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden0 batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, hidden, is_batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare(input, hx, "RNNCell", 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        self.nonlinearity == "relu")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), is_batched = self._prepare(input, hx, "LSTMCell", 2)
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare(input, hx, "GRUCell", 1)
        ret = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
