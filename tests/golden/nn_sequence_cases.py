"""The cases of nn_sequence.json, written once: gen_nn_sequence.py runs them with PyTorch 1.13 and
tests/python/test_nn_sequence.py with tinyddp; each function takes the torch-like module as its argument.

A case builds its module right after torch.manual_seed(seed) (so its parameters are the seed's draws), calls it on
inputs given as data (drawn by the generator from a separate Generator, so the default stream is left for dropout),
and backpropagates sum_k (k + 1) * sum(out_k * out_k) over the flattened outputs (with "double", the squared norm
of that loss's gradient with respect to the first input instead: second derivatives through the composed cells).
"""
import functools

# id, ctor (an expression over torch, nn), input shapes, call (an expression over m, xs, torch), train, grad
CASES = [
    dict(id="rnn_tanh", ctor="nn.RNN(3, 4)", shapes=[(5, 2, 3)], call="m(xs[0])"),
    dict(id="rnn_relu_2l_hx", ctor="nn.RNN(3, 4, 2, nonlinearity='relu')", shapes=[(5, 2, 3), (2, 2, 4)],
         call="m(xs[0], xs[1])"),
    dict(id="rnn_bi_batch_first_nobias", ctor="nn.RNN(3, 4, bias=False, batch_first=True, bidirectional=True)",
         shapes=[(2, 5, 3)], call="m(xs[0])"),
    dict(id="rnn_unbatched", ctor="nn.RNN(3, 4, 2, nonlinearity='relu')", shapes=[(5, 3), (2, 4)],
         call="m(xs[0], xs[1])"),
    dict(id="lstm", ctor="nn.LSTM(3, 5)", shapes=[(6, 2, 3)], call="m(xs[0])"),
    dict(id="lstm_hx_cx", ctor="nn.LSTM(3, 5, num_layers=2)", shapes=[(4, 3, 3), (2, 3, 5), (2, 3, 5)],
         call="m(xs[0], (xs[1], xs[2]))"),
    dict(id="lstm_bi_batch_first", ctor="nn.LSTM(4, 5, 2, batch_first=True, bidirectional=True)",
         shapes=[(3, 4, 4)], call="m(xs[0])"),
    dict(id="lstm_proj_bi", ctor="nn.LSTM(3, 6, 2, bidirectional=True, proj_size=2)",
         shapes=[(4, 2, 3), (4, 2, 2), (4, 2, 6)], call="m(xs[0], (xs[1], xs[2]))"),
    dict(id="lstm_dropout_train", ctor="nn.LSTM(3, 5, 3, dropout=0.4)", shapes=[(4, 2, 3)], call="m(xs[0])",
         train=True),
    dict(id="lstm_dropout_eval", ctor="nn.LSTM(3, 5, 3, dropout=0.4)", shapes=[(4, 2, 3)], call="m(xs[0])"),
    dict(id="lstm_unbatched_proj", ctor="nn.LSTM(3, 5, proj_size=3, bias=False)", shapes=[(4, 3)],
         call="m(xs[0])"),
    dict(id="lstm_no_grad", ctor="nn.LSTM(3, 4, batch_first=True)", shapes=[(2, 3, 3)], call="m(xs[0])",
         grad=False),
    dict(id="gru", ctor="nn.GRU(3, 4)", shapes=[(5, 2, 3)], call="m(xs[0])"),
    dict(id="gru_2l_bi_hx", ctor="nn.GRU(3, 4, 2, bidirectional=True)", shapes=[(5, 2, 3), (4, 2, 4)],
         call="m(xs[0], xs[1])"),
    dict(id="gru_dropout_batch_first", ctor="nn.GRU(2, 3, 2, batch_first=True, dropout=0.5, bias=False)",
         shapes=[(3, 4, 2)], call="m(xs[0])", train=True),
    dict(id="rnn_cell", ctor="nn.RNNCell(3, 4)", shapes=[(2, 3), (2, 4)], call="m(xs[0], xs[1])"),
    dict(id="rnn_cell_relu_unbatched", ctor="nn.RNNCell(3, 4, nonlinearity='relu')", shapes=[(3,)],
         call="m(xs[0])"),
    dict(id="lstm_cell", ctor="nn.LSTMCell(3, 4)", shapes=[(2, 3), (2, 4), (2, 4)], call="m(xs[0], (xs[1], xs[2]))"),
    dict(id="lstm_cell_loop", ctor="nn.LSTMCell(3, 4, bias=False)", shapes=[(5, 2, 3)],
         call="functools.reduce(lambda s, x: m(x, s), xs[0], None)"),
    dict(id="gru_cell", ctor="nn.GRUCell(3, 4)", shapes=[(2, 3)], call="m(xs[0])"),
    dict(id="gru_cell_unbatched", ctor="nn.GRUCell(3, 4, bias=False)", shapes=[(3,), (4,)], call="m(xs[0], xs[1])"),

    dict(id="lstm_packed", ctor="nn.LSTM(3, 4)", shapes=[(5, 4, 3)],
         call="(lambda o: [nn.utils.rnn.pad_packed_sequence(o[0])[0], o[1]])(m(nn.utils.rnn.pack_padded_sequence("
              "xs[0], [5, 3, 3, 1])))"),
    dict(id="lstm_packed_bi_unsorted_hx", ctor="nn.LSTM(3, 4, 2, bidirectional=True)",
         shapes=[(5, 4, 3), (4, 4, 4), (4, 4, 4)],
         call="(lambda o: [nn.utils.rnn.pad_packed_sequence(o[0], total_length=6)[0], o[1]])(m(nn.utils.rnn."
              "pack_padded_sequence(xs[0], torch.tensor([2, 5, 1, 3]), enforce_sorted=False), (xs[1], xs[2])))"),
    dict(id="gru_packed_batch_first_unsorted", ctor="nn.GRU(3, 4, 2, batch_first=True, bidirectional=True)",
         shapes=[(4, 4, 3)],
         call="(lambda o: [nn.utils.rnn.pad_packed_sequence(o[0], batch_first=True, padding_value=-1.0)[0], o[1]])("
              "m(nn.utils.rnn.pack_padded_sequence(xs[0], [2, 4, 4, 1], batch_first=True, enforce_sorted=False)))"),
    dict(id="rnn_pack_sequence_hx", ctor="nn.RNN(3, 4, bidirectional=True)", shapes=[(1, 3), (3, 3), (2, 3), (2, 3, 4)],
         call="(lambda o: [o[0].data, o[1]])(m(nn.utils.rnn.pack_sequence(xs[:3], enforce_sorted=False), xs[3]))"),
    dict(id="lstm_proj_packed", ctor="nn.LSTM(3, 4, proj_size=2, bidirectional=True)", shapes=[(4, 2, 3)],
         call="(lambda o: [o[0].data, o[1]])(m(nn.utils.rnn.pack_padded_sequence(xs[0], [4, 2])))"),

    dict(id="lstm_double_backward", ctor="nn.LSTM(3, 4, 2, bidirectional=True)", shapes=[(4, 2, 3)],
         call="m(xs[0])", double=True),
    dict(id="gru_cell_double_backward", ctor="nn.GRUCell(3, 4)", shapes=[(2, 3), (2, 4)], call="m(xs[0], xs[1])",
         double=True),

    dict(id="mha_self", ctor="nn.MultiheadAttention(8, 2)", shapes=[(5, 3, 8)], call="m(xs[0], xs[0], xs[0])"),
    dict(id="mha_batch_first_per_head", ctor="nn.MultiheadAttention(8, 4, batch_first=True)", shapes=[(3, 5, 8)],
         call="m(xs[0], xs[0], xs[0], average_attn_weights=False)"),
    dict(id="mha_cross_padding", ctor="nn.MultiheadAttention(8, 2)", shapes=[(5, 3, 8), (4, 3, 8)],
         call="m(xs[0], xs[1], xs[1], key_padding_mask=torch.tensor([[False, False, False, True], [False] * 4, "
              "[True, False, False, False]]))"),
    dict(id="mha_kdim_vdim_bias_kv_zero_attn",
         ctor="nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True)",
         shapes=[(5, 3, 8), (4, 3, 3), (4, 3, 5), (5, 4)], call="m(xs[0], xs[1], xs[2], attn_mask=xs[3])"),
    dict(id="mha_unbatched_causal_nobias", ctor="nn.MultiheadAttention(6, 3, bias=False)", shapes=[(5, 6)],
         call="m(xs[0], xs[0], xs[0], need_weights=False, attn_mask=torch.triu(torch.ones(5, 5), 1) == 1)"),
    dict(id="mha_dropout_train", ctor="nn.MultiheadAttention(8, 2, dropout=0.5)", shapes=[(5, 3, 8)],
         call="m(xs[0], xs[0], xs[0])", train=True),
    dict(id="mha_3d_mask_and_padding", ctor="nn.MultiheadAttention(8, 2, batch_first=True)",
         shapes=[(3, 5, 8), (3, 4, 8), (3, 4, 8), (6, 5, 4)],
         call="m(xs[0], xs[1], xs[2], attn_mask=xs[3], key_padding_mask=torch.tensor([[False, False, False, True],"
              " [False] * 4, [True, False, False, False]]))"),

    dict(id="mha_double_backward", ctor="nn.MultiheadAttention(8, 2)", shapes=[(4, 2, 8), (3, 2, 8)],
         call="m(xs[0], xs[1], xs[1])", double=True),

    dict(id="encoder_layer", ctor="nn.TransformerEncoderLayer(8, 2, 16)", shapes=[(5, 2, 8)], call="m(xs[0])"),
    dict(id="encoder_layer_norm_first_gelu_train",
         ctor="nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True, norm_first=True, "
              "activation='gelu')", shapes=[(2, 5, 8)], call="m(xs[0])", train=True),
    dict(id="encoder_padding_norm",
         ctor="nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, "
              "norm=nn.LayerNorm(8))", shapes=[(2, 5, 8)],
         call="m(xs[0], src_key_padding_mask=torch.tensor([[False, False, False, True, True], [False] * 5]))"),
    dict(id="encoder_nested_eval_no_grad",
         ctor="nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)",
         shapes=[(2, 5, 8)], grad=False,
         call="m(xs[0], src_key_padding_mask=torch.tensor([[False, False, False, True, True], [False] * 4 + "
              "[True]]))"),
    dict(id="encoder_nested_float_mask_trimmed",
         ctor="nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 1)", shapes=[(2, 3, 4)],
         grad=False,
         call="m(xs[0], src_key_padding_mask=torch.tensor([[0.0, 0.0, float('-inf')], [0.0, -1.0, -1.0]]))"),
    dict(id="encoder_not_nested_left_padding",
         ctor="nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 1)", shapes=[(2, 3, 4)],
         grad=False, call="m(xs[0], src_key_padding_mask=torch.tensor([[True, False, False], [False] * 3]))"),
    dict(id="encoder_causal",
         ctor="nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU()), 2)",
         shapes=[(5, 2, 8)], call="m(xs[0], mask=nn.Transformer.generate_square_subsequent_mask(5))"),
    dict(id="decoder_train", ctor="nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.2), 2)",
         shapes=[(4, 2, 8), (5, 2, 8)], train=True,
         call="m(xs[0], xs[1], tgt_mask=nn.Transformer.generate_square_subsequent_mask(4), "
              "memory_key_padding_mask=torch.tensor([[False, False, False, True, True], [False] * 5]))"),
    dict(id="transformer_batch_first", ctor="nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, batch_first=True)",
         shapes=[(2, 5, 8), (2, 4, 8)],
         call="m(xs[0], xs[1], tgt_mask=nn.Transformer.generate_square_subsequent_mask(4))"),
    dict(id="transformer_norm_first_train", ctor="nn.Transformer(8, 2, 1, 2, 16, norm_first=True)",
         shapes=[(5, 2, 8), (4, 2, 8)], call="m(xs[0], xs[1])", train=True),
]

# Bad arguments and inputs: each expression (over torch, nn) raises in 1.13; the type and text are compared.
ERRORS = [
    "nn.LSTM(3, 4)(torch.zeros(2, 3, 5))",
    "nn.LSTM(3, 4)(torch.zeros(1, 2, 3, 3))",
    "nn.GRU(3, 4)(torch.zeros(2, 3, 3, 1))",
    "nn.RNN(3, 4)(torch.zeros(2))",
    "nn.LSTM(3, 4)(torch.zeros(2, 3, 3), (torch.zeros(1, 2, 4), torch.zeros(1, 3, 4)))",
    "nn.LSTM(3, 4)(torch.zeros(2, 3, 3), (torch.zeros(1, 3, 4), torch.zeros(1, 3, 5)))",
    "nn.LSTM(3, 4)(torch.zeros(2, 3, 3), (torch.zeros(3, 4), torch.zeros(3, 4)))",
    "nn.LSTM(3, 4)(torch.zeros(2, 3), (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4)))",
    "nn.GRU(3, 4, 2)(torch.zeros(2, 3, 3), torch.zeros(1, 3, 4))",
    "nn.GRU(3, 4)(torch.zeros(2, 3, 3), torch.zeros(3, 4))",
    "nn.RNN(3, 4)(torch.zeros(2, 3), torch.zeros(1, 1, 4))",
    "nn.RNN(3, 4, batch_first=True)(torch.zeros(2, 3, 3), torch.zeros(1, 3, 4))",
    "nn.LSTM(3, 4)(torch.zeros(2, 3, 3, dtype=torch.float64))",
    "nn.LSTM(3, 4, proj_size=4)",
    "nn.LSTM(3, 4, proj_size=-1)",
    "nn.GRU(3, 4, proj_size=2)",
    "nn.LSTM(3, 4, dropout=1.5)",
    "nn.RNN(3, 4, nonlinearity='sigmoid')",
    "nn.LSTMCell(3, 4)(torch.zeros(2, 3, 3))",
    "nn.LSTMCell(3, 4)(torch.zeros(2, 5))",
    "nn.GRUCell(3, 4)(torch.zeros(2, 3), torch.zeros(3, 4))",
    "nn.RNNCell(3, 4)(torch.zeros(2, 3), torch.zeros(2, 5))",
    "nn.LSTMCell(3, 4)(torch.zeros(2, 3), (torch.zeros(2, 4), torch.zeros(2, 5)))",
    "nn.MultiheadAttention(8, 3)",
    "nn.MultiheadAttention(8, 2)(torch.zeros(1, 5, 3, 8), torch.zeros(1, 5, 3, 8), torch.zeros(1, 5, 3, 8))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 8), torch.zeros(4, 8))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 6), torch.zeros(5, 3, 6), torch.zeros(5, 3, 6))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 3, 8), torch.zeros(3, 3, 8))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 3, 8), torch.zeros(4, 3, 8), "
    "attn_mask=torch.zeros(5, 5))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 3, 8), torch.zeros(4, 3, 8), "
    "attn_mask=torch.zeros(3, 5, 4))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 3, 8), torch.zeros(4, 3, 8), "
    "key_padding_mask=torch.zeros(3, 5, dtype=torch.bool))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 3, 8), torch.zeros(4, 3, 8), "
    "key_padding_mask=torch.zeros(3, 4, dtype=torch.int64))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 3, 8), torch.zeros(4, 3, 8), torch.zeros(4, 3, 8), "
    "key_padding_mask=torch.zeros(3, dtype=torch.bool))",
    "nn.MultiheadAttention(8, 2)(torch.zeros(5, 8), torch.zeros(4, 8), torch.zeros(4, 8), "
    "attn_mask=torch.zeros(3, 5, 4))",
    "nn.TransformerEncoderLayer(8, 2, activation='tanh')",
    "nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 3, 2), [3, 5, 1])",
    "nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 3, 2), [5, 3, 0])",
    "nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 3, 2), [5, 3])",
    "nn.utils.rnn.pad_packed_sequence(nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 3, 2), [5, 3, 1]), "
    "total_length=3)",
    "nn.LSTM(2, 4)(nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 3, 2), [5, 3, 1]), (torch.zeros(1, 2, 4), "
    "torch.zeros(1, 2, 4)))",
    "nn.Transformer(8, 2, 1, 1, 16)(torch.zeros(5, 2, 8), torch.zeros(4, 3, 8))",
    "nn.Transformer(8, 2, 1, 1, 16)(torch.zeros(5, 2, 8), torch.zeros(4, 2, 6))",
]

# Constructions that warn in 1.13: the category and text of each warning are compared.
WARNINGS = [
    "nn.LSTM(3, 4, dropout=0.2)",
    "nn.GRU(3, 4, 1, dropout=0.5)",
    "nn.LSTM(3, 4, 2, dropout=0.2)",
]

# Attributes read after construction (an expression over torch, nn), compared by repr.
ATTRIBUTES = [
    "[(n, tuple(p.shape)) for n, p in nn.LSTM(3, 6, 2, bidirectional=True, proj_size=2).named_parameters()]",
    "nn.LSTM(3, 4, 2, bidirectional=True)._flat_weights_names",
    "[[tuple(w.shape) for w in ws] for ws in nn.GRU(3, 4, 2).all_weights]",
    "(nn.RNN(3, 4, 1, nonlinearity='relu').nonlinearity, nn.RNN(3, 4).mode, nn.LSTM(3, 4, dropout=0).dropout)",
    "[(n, tuple(p.shape)) for n, p in nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)"
    ".named_parameters()]",
    "[n for n, _ in nn.MultiheadAttention(8, 2, bias=False).named_parameters()]",
    "(nn.MultiheadAttention(8, 2).head_dim, nn.MultiheadAttention(8, 2, kdim=4)._qkv_same_embed_dim)",
    "[type(m).__name__ for m in nn.TransformerEncoderLayer(8, 2).modules()]",
    "[nn.TransformerEncoderLayer(8, 2, activation=a).activation_relu_or_gelu for a in ('relu', 'gelu', nn.GELU(), "
    "nn.ReLU(), nn.functional.silu)]",
    "list(nn.Transformer(8, 2, 1, 1, 16).state_dict().keys())",
    "nn.Transformer.generate_square_subsequent_mask(4).tolist()",
    "nn.utils.rnn.pack_sequence([torch.arange(3.), torch.arange(5.), torch.arange(1.)], enforce_sorted=False)",
    "nn.utils.rnn.pad_sequence([torch.arange(3.), torch.arange(5.)], batch_first=True, padding_value=-1.0)",
    "nn.utils.rnn.unpack_sequence(nn.utils.rnn.pack_sequence([torch.arange(3.), torch.arange(5.)], False))",
    "nn.utils.rnn.pad_packed_sequence(nn.utils.rnn.pack_sequence([torch.arange(2.), torch.arange(3.)], False))",
    "nn.utils.rnn.pack_padded_sequence(torch.zeros(3, 4, 2), torch.tensor([3, 2, 3, 2]), "
    "enforce_sorted=False).sorted_indices",
    "nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 1]))",
    "type(nn.LSTM(2, 3)(nn.utils.rnn.pack_sequence([torch.zeros(2, 2)]))[0]).__name__",
    "(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 3).num_layers, nn.Transformer(8, 2, 1, 1, 16).d_model)",
]


def flatten(out):
    """The tensors of a module's result in order: (output, (h, c)) -> [output, h, c]; None left out."""
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def run_case(torch, case, inputs):
    """case run with `torch` on the input tensors: a dict of reprs, names and tensors (outputs, gradients)."""
    nn = torch.nn
    torch.manual_seed(case.get("seed", 0))
    m = eval(case["ctor"], {"torch": torch, "nn": nn})
    m.train(case.get("train", False))
    grad = case.get("grad", True)
    initial = [p.detach().clone() for p in m.parameters()]
    xs = [x.detach().clone().requires_grad_(grad) for x in inputs]
    with torch.set_grad_enabled(grad):
        outs = flatten(eval(case["call"], {"torch": torch, "nn": nn, "m": m, "xs": xs, "functools": functools}))
    result = {"repr": repr(m), "state_dict_keys": list(m.state_dict().keys()),
              "param_names": [n for n, _ in m.named_parameters()], "initial": initial, "outs": outs}
    if grad:
        loss = sum((k + 1) * (o * o).sum() for k, o in enumerate(outs))
        if case.get("double"):   # second order: the loss becomes |d loss / d xs[0]|^2
            g, = torch.autograd.grad(loss, xs[0], create_graph=True)
            loss = (g * g).sum()
        loss.backward()
        result["x_grads"] = [x.grad for x in xs]
        result["param_grads"] = [p.grad for p in m.parameters()]
    return result
