"""The cases of grad_fn_names.json and how one runs, shared by gen_grad_fn_names.py (with torch) and
tests/python/test_grad_fn_names.py (with tinyddp), so both sides do exactly the same thing with a case.

A case is an expression over leaves that require grad (written-out float32 values, pairwise distinct and away from
0, so no max or sort ties and no kinks): x, y (3, 4), v (4), m (2, 3, 4), im (2, 3, 5, 5), vol (1, 2, 4, 4, 4),
w, sq (4, 4), and the constant weights cw (2, 3, 3, 3), cb (2) and cw1 (2, 3, 2), which do not require grad. What
1.13 records is each result's grad_fn name and the names of its next_functions (one level), what scripts print
and walk; values and gradients (of sum over outputs o of (o * c).sum(), c = ((k % 7) - 3) / 2 for element k) are
recorded too, and, for the cases named in DOUBLE, the gradient of sum over leaves of (g * g).sum() taken through
the first gradients' graph (create_graph): second derivatives through each recorded node.
"""
import math

# (id, expression); `torch` and `F` (torch.nn.functional) are in scope with the leaves.
CASES = [
    # ---- views and shapes ----
    ("permute", "x.permute(1, 0)"),
    ("permute_3d", "m.permute(2, 0, 1)"),
    ("permute_identity", "x.permute(0, 1)"),
    ("movedim", "m.movedim(0, 2)"),
    ("T_2d", "x.T"),
    ("T_1d", "v.T"),
    ("t", "x.t()"),
    ("transpose", "x.transpose(0, 1)"),
    ("swapaxes", "x.swapaxes(0, 1)"),
    ("chunk", "x.chunk(2, 0)"),
    ("chunk_dim1", "x.chunk(2, 1)"),
    ("chunk_uneven", "x.chunk(3, 1)"),
    ("chunk_one", "x.chunk(1, 1)"),
    ("split_int", "x.split(2, 1)"),
    ("split_sizes", "x.split([1, 3], 1)"),
    ("split_one_piece", "x.split(10, 1)"),
    ("torch_split", "torch.split(x, 2, 0)"),
    ("torch_split_sizes", "torch.split(x, [2, 2], 1)"),
    ("unbind", "x.unbind(0)"),
    ("torch_unbind", "torch.unbind(m, 1)"),
    ("select", "x.select(1, 2)"),
    ("getitem_int", "x[1]"),
    ("getitem_slice", "x[:, 1:3]"),
    ("narrow", "x.narrow(1, 1, 2)"),
    ("reshape", "x.reshape(4, 3)"),
    ("reshape_copy", "x.t().reshape(12)"),
    ("view", "x.view(12)"),
    ("flatten", "m.flatten(1)"),
    ("unflatten", "x.unflatten(1, (2, 2))"),
    ("squeeze", "x[None].squeeze(0)"),
    ("unsqueeze", "x.unsqueeze(0)"),
    ("expand", "v.expand(3, 4)"),
    ("expand_as", "v.expand_as(x)"),
    ("broadcast_to", "v.broadcast_to(3, 4)"),
    ("repeat", "x.repeat(2, 1)"),
    ("repeat_same", "x.repeat(1, 1)"),
    ("tile", "x.tile(2)"),
    ("repeat_interleave", "x.repeat_interleave(2)"),
    ("repeat_interleave_dim", "x.repeat_interleave(2, 1)"),
    ("flip", "torch.flip(x, [0])"),
    ("fliplr", "torch.fliplr(x)"),
    ("roll", "torch.roll(x, 1, 0)"),
    ("roll_flat", "torch.roll(x, 2)"),
    ("roll_two", "x.roll((1, 1), (0, 1))"),
    ("rot90", "torch.rot90(x)"),
    ("rot90_2", "torch.rot90(x, 2)"),
    ("tril", "torch.tril(x)"),
    ("triu", "x.triu(1)"),
    ("diag_vector", "torch.diag(v)"),
    ("diag_matrix", "torch.diag(sq, 1)"),
    ("diagonal", "sq.diagonal()"),
    ("diag_embed", "torch.diag_embed(x)"),
    ("trace", "sq.trace()"),
    ("unfold", "x.unfold(1, 2, 1)"),
    ("atleast_2d", "torch.atleast_2d(v)"),
    ("atleast_3d", "torch.atleast_3d(x)"),
    ("hstack", "torch.hstack([v, v])"),
    ("vstack", "torch.vstack([v, v])"),
    ("dstack", "torch.dstack([v, v])"),
    ("column_stack", "torch.column_stack([v, v])"),
    ("cat", "torch.cat([x, y])"),
    ("stack", "torch.stack([x, y])"),
    ("block_diag", "torch.block_diag(x, y)"),
    ("meshgrid", "torch.meshgrid(v, v, indexing='ij')"),
    ("kron", "torch.kron(x, y)"),
    ("gather", "x.gather(1, torch.tensor([[0, 1], [2, 3], [1, 1]]))"),
    ("index_select", "x.index_select(0, torch.tensor([0, 2]))"),
    ("take", "x.take(torch.tensor([0, 5]))"),
    ("masked_select", "x.masked_select(x > 0)"),
    ("masked_fill", "x.masked_fill(x > 0, 0.0)"),
    ("masked_fill_tensor", "x.masked_fill(x > 0, v[0])"),
    ("where", "torch.where(x > 0, x, y)"),
    ("scatter", "x.scatter(1, torch.tensor([[0], [1], [2]]), y[:, :1])"),
    ("scatter_value", "x.scatter(1, torch.tensor([[0], [1], [2]]), 2.0)"),
    ("scatter_add", "x.scatter_add(1, torch.tensor([[0], [1], [2]]), y[:, :1])"),
    ("scatter_reduce", "x.scatter_reduce(1, torch.tensor([[0], [1], [2]]), y[:, :1], 'sum')"),
    ("index_add", "x.index_add(0, torch.tensor([0]), y[:1], alpha=2)"),
    ("index_fill", "x.index_fill(1, torch.tensor([0]), 1.0)"),
    ("index_fill_tensor", "x.index_fill(1, torch.tensor([0]), v[0])"),
    ("index_copy", "x.index_copy(0, torch.tensor([0]), y[:1])"),
    ("put", "x.put(torch.tensor([0]), v[:1])"),
    ("masked_scatter", "x.masked_scatter(x > 0, y)"),
    ("renorm", "x.renorm(2, 0, 1.0)"),
    ("sum_to_size", "x.sum_to_size(1, 4)"),
    # ---- order statistics and reductions ----
    ("topk", "x.topk(2, 1)"),
    ("topk_smallest", "torch.topk(x, 2, 0, largest=False)"),
    ("sort", "x.sort(1)"),
    ("sort_descending", "x.sort(0, descending=True)"),
    ("max", "x.max()"),
    ("max_dim", "x.max(1)"),
    ("max_dim_keepdim", "torch.max(x, 1, keepdim=True)"),
    ("min", "x.min()"),
    ("min_dim", "x.min(1)"),
    ("maximum", "torch.maximum(x, y)"),
    ("minimum", "torch.minimum(x, y)"),
    ("max_binary", "torch.max(x, y)"),
    ("min_binary", "torch.min(x, y)"),
    ("amax", "x.amax(1)"),
    ("amax_all", "torch.amax(x, (0, 1))"),
    ("amin", "x.amin(0)"),
    ("logsumexp", "x.logsumexp(1)"),
    ("logsumexp_all", "x.logsumexp((0, 1))"),
    ("sum", "x.sum()"),
    ("sum_dim", "x.sum(1)"),
    ("mean", "x.mean()"),
    ("mean_dims", "m.mean((0, 2))"),
    ("nansum", "x.nansum()"),
    ("nanmean", "x.nanmean()"),
    ("prod", "x.prod()"),
    ("prod_dim", "x.prod(1)"),
    ("prod_keepdim", "x.prod(0, keepdim=True)"),
    ("cumsum", "x.cumsum(0)"),
    ("cumsum_last", "x.cumsum(-1)"),
    ("cumsum_dtype", "x.cumsum(0, dtype=torch.float64)"),
    ("cumprod", "x.cumprod(1)"),
    ("median", "x.median()"),
    ("median_dim", "x.median(1)"),
    ("kthvalue", "x.kthvalue(2, 1)"),
    ("mode", "x.mode(1)"),
    ("var", "x.var()"),
    ("var_dim", "x.var(1)"),
    ("var_biased", "torch.var(x, unbiased=False)"),
    ("var_correction", "x.var(1, correction=0)"),
    ("std", "x.std()"),
    ("std_dim", "x.std(dim=0)"),
    ("std_keepdim", "x.std(0, True, True)"),
    ("var_mean", "torch.var_mean(x, 1)"),
    ("std_mean", "torch.std_mean(x)"),
    ("norm", "x.norm()"),
    ("norm_2", "x.norm(2)"),
    ("norm_dim", "x.norm(dim=1)"),
    ("norm_keepdim", "torch.norm(x, dim=1, keepdim=True)"),
    ("norm_p1", "x.norm(p=1)"),
    ("norm_p1_dim", "x.norm(p=1, dim=0)"),
    ("norm_fro_two_dims", "x.norm(dim=(0, 1))"),
    ("norm_vector", "v.norm()"),
    ("dist", "torch.dist(x, y)"),
    ("dist_p1", "torch.dist(x, y, 1)"),
    ("cdist", "torch.cdist(x, y)"),
    ("cdist_p1", "torch.cdist(x, y, p=1)"),
    ("cdist_matrix_product_path", "torch.cdist(x.repeat(9, 1), y)"),
    # ---- elementwise ----
    ("abs", "x.abs()"),
    ("neg", "-x"),
    ("sign", "x.sign()"),
    ("square", "x.square()"),
    ("pow_2", "x.pow(2)"),
    ("pow_tensor", "x.abs() ** y"),
    ("rpow", "2 ** x"),
    ("sqrt", "x.abs().sqrt()"),
    ("rsqrt", "x.abs().rsqrt()"),
    ("reciprocal", "x.reciprocal()"),
    ("rdiv", "2 / x"),
    ("rsub", "1 - x"),
    ("sub_scalar", "x - 1"),
    ("add_alpha", "torch.add(x, y, alpha=2)"),
    ("sub_alpha", "torch.sub(x, y, alpha=2)"),
    ("exp", "x.exp()"),
    ("exp2", "torch.exp2(x)"),
    ("log", "x.abs().log()"),
    ("log2", "x.abs().log2()"),
    ("log10", "x.abs().log10()"),
    ("log1p", "x.abs().log1p()"),
    ("expm1", "x.expm1()"),
    ("sin", "x.sin()"),
    ("tan", "x.tan()"),
    ("asin", "(x / 10).asin()"),
    ("acos", "(x / 10).acos()"),
    ("atan", "x.atan()"),
    ("sinh", "x.sinh()"),
    ("cosh", "x.cosh()"),
    ("asinh", "x.asinh()"),
    ("atanh", "(x / 10).atanh()"),
    ("atan2", "torch.atan2(x, y)"),
    ("hypot", "torch.hypot(x, y)"),
    ("logaddexp", "torch.logaddexp(x, y)"),
    ("logaddexp2", "torch.logaddexp2(x, y)"),
    ("xlogy", "torch.xlogy(x, y.abs())"),
    ("xlogy_number_other", "torch.xlogy(x, 2.0)"),
    ("xlogy_number_self", "torch.xlogy(2.0, y.abs())"),
    ("logit", "x.sigmoid().logit()"),
    ("logit_eps", "x.sigmoid().logit(0.1)"),
    ("lerp", "torch.lerp(x, y, 0.3)"),
    ("lerp_tensor", "torch.lerp(x, y, v)"),
    ("addcmul", "torch.addcmul(x, y, v, value=0.5)"),
    ("addcdiv", "torch.addcdiv(x, y, v, value=0.5)"),
    ("nan_to_num", "x.nan_to_num()"),
    ("fmod", "torch.fmod(x, 1.5)"),
    ("remainder", "torch.remainder(x, 1.5)"),
    ("remainder_tensor", "torch.remainder(x, y)"),
    ("mod", "x % 2"),
    ("clamp", "x.clamp(-0.5, 0.5)"),
    ("clamp_min_kw", "x.clamp(min=0)"),
    ("clamp_min", "x.clamp_min(0.0)"),
    ("clamp_max", "x.clamp_max(0.0)"),
    ("torch_clamp_min", "torch.clamp_min(x, 0.0)"),
    ("clip", "x.clip(-1, 1)"),
    # ---- products ----
    ("mm", "x.mm(w)"),
    ("matmul_2d", "x @ w"),
    ("matmul_mv", "x @ v"),
    ("matmul_dot", "v @ v"),
    ("matmul_row", "v @ sq"),
    ("matmul_3d_2d", "m @ w"),
    ("matmul_3d_1d", "m @ v"),
    ("matmul_4d_2d", "m.reshape(2, 1, 3, 4) @ sq.t()"),
    ("matmul_transposed_3d_2d", "m.transpose(1, 2)[:, :3] @ sq[:3, :3]"),
    ("matmul_3d_3d", "m @ m.transpose(1, 2)"),
    ("torch_matmul", "torch.matmul(m, w)"),
    ("bmm", "torch.bmm(m, m.transpose(1, 2))"),
    ("mv", "x.mv(v)"),
    ("dot", "v.dot(v)"),
    ("outer", "torch.outer(v, v)"),
    ("inner", "torch.inner(x, y)"),
    ("tensordot", "torch.tensordot(x, w, 1)"),
    ("addmm", "torch.addmm(v, x, w)"),
    ("addmm_beta0", "torch.addmm(v, x, w, beta=0)"),
    ("addmv", "torch.addmv(v[:3], x, v)"),
    ("addr", "torch.addr(x, v[:3], v)"),
    ("baddbmm", "torch.baddbmm(m, m, sq.expand(2, 4, 4))"),
    ("addbmm", "torch.addbmm(sq, m.transpose(1, 2), m)"),
    ("cross", "torch.cross(x[:, :3], y[:, :3], dim=1)"),
    ("einsum_mm", "torch.einsum('ij,jk->ik', x, w)"),
    ("einsum_transposed", "torch.einsum('ij,kj->ik', x, y)"),
    ("einsum_implicit", "torch.einsum('ij,jk', x, w)"),
    ("einsum_batched", "torch.einsum('bij,bkj->bik', m, m)"),
    ("einsum_dot", "torch.einsum('i,i->', v, v)"),
    ("einsum_outer", "torch.einsum('i,j->ij', v, v)"),
    ("einsum_elementwise", "torch.einsum('ij,ij->ij', x, y)"),
    ("einsum_sum", "torch.einsum('ij->', x)"),
    ("einsum_column_sums", "torch.einsum('ij->j', x)"),
    ("einsum_transpose", "torch.einsum('ij->ji', x)"),
    ("einsum_identity", "torch.einsum('ij', x)"),
    ("einsum_three", "torch.einsum('ij,jk,kl->il', x, w, sq)"),
    ("einsum_ellipsis", "torch.einsum('...j,jk->...k', m, w)"),
    # ---- nn.functional: activations ----
    ("relu", "F.relu(x)"),
    ("relu6", "F.relu6(x)"),
    ("leaky_relu", "F.leaky_relu(x)"),
    ("leaky_relu_slope", "F.leaky_relu(x, 0.2)"),
    ("elu", "F.elu(x)"),
    ("selu", "F.selu(x)"),
    ("celu", "F.celu(x)"),
    ("gelu", "F.gelu(x)"),
    ("gelu_tanh", "F.gelu(x, approximate='tanh')"),
    ("silu", "F.silu(x)"),
    ("mish", "F.mish(x)"),
    ("softplus", "F.softplus(x)"),
    ("softsign", "F.softsign(x)"),
    ("hardtanh", "F.hardtanh(x)"),
    ("hardsigmoid", "F.hardsigmoid(x)"),
    ("hardswish", "F.hardswish(x)"),
    ("logsigmoid", "F.logsigmoid(x)"),
    ("tanhshrink", "F.tanhshrink(x)"),
    ("softshrink", "F.softshrink(x)"),
    ("hardshrink", "F.hardshrink(x)"),
    ("threshold", "F.threshold(x, 0.1, 20.0)"),
    ("glu", "F.glu(x)"),
    ("prelu", "F.prelu(x, torch.full((1,), 0.25))"),
    ("prelu_weight_grad", "F.prelu(x, v)"),
    ("sigmoid", "F.sigmoid(x)"),
    ("tanh", "F.tanh(x)"),
    ("softmax", "F.softmax(x, dim=1)"),
    ("log_softmax", "F.log_softmax(x, dim=1)"),
    ("softmin", "F.softmin(x, dim=1)"),
    ("softmax_method", "x.softmax(1)"),
    ("dropout_eval", "F.dropout(x, 0.5, training=False)"),
    ("dropout", "F.dropout(x, 0.5)"),
    ("dropout2d", "F.dropout2d(im, 0.5)"),
    # ---- nn.functional: layers ----
    ("linear", "F.linear(x, w)"),
    ("linear_bias", "F.linear(x, w, v)"),
    ("linear_3d", "F.linear(m, w, v)"),
    ("linear_3d_no_bias", "F.linear(m, w)"),
    ("linear_3d_noncontiguous", "F.linear(m.transpose(0, 1), w, v)"),
    ("linear_1d", "F.linear(v, w, v)"),
    ("embedding", "F.embedding(torch.tensor([0, 2]), x)"),
    ("layer_norm", "F.layer_norm(x, (4,))"),
    ("layer_norm_affine", "F.layer_norm(x, (4,), v, v)"),
    ("group_norm", "F.group_norm(im, 1)"),
    ("group_norm_affine", "F.group_norm(im, 3, v[:3] + 1, v[:3])"),
    ("instance_norm", "F.instance_norm(im)"),
    ("batch_norm", "F.batch_norm(x, torch.zeros(4), torch.ones(4), training=True)"),
    ("batch_norm_eval", "F.batch_norm(x, torch.zeros(4), torch.ones(4), v, v, training=False)"),
    ("normalize", "F.normalize(x)"),
    ("normalize_dim0", "F.normalize(x, dim=0)"),
    ("normalize_p1", "F.normalize(x, p=1)"),
    ("cosine_similarity", "F.cosine_similarity(x, y)"),
    ("torch_cosine_similarity", "torch.cosine_similarity(x, y)"),
    ("pairwise_distance", "F.pairwise_distance(x, y)"),
    ("pdist", "F.pdist(x)"),
    ("pad_constant", "F.pad(x, (1, 1))"),
    ("pad_value", "F.pad(x, (1, 1), value=2.0)"),
    ("pad_zero", "F.pad(x, (0, 0))"),
    ("pad_reflect_1d", "F.pad(m, (1, 1), mode='reflect')"),
    ("pad_reflect_2d", "F.pad(im, (1, 1, 1, 1), mode='reflect')"),
    ("pad_replicate_1d", "F.pad(m, (1, 1), mode='replicate')"),
    ("pad_replicate_2d", "F.pad(im, (1, 1, 1, 1), mode='replicate')"),
    ("pad_replicate_3d", "F.pad(vol, (1, 1, 1, 1, 1, 1), mode='replicate')"),
    ("pad_circular", "F.pad(m, (1, 1), mode='circular')"),
    ("conv2d", "F.conv2d(im, cw)"),
    ("conv2d_bias_padding", "F.conv2d(im, cw, cb, padding=1)"),
    ("conv2d_weight_grad", "F.conv2d(im, sq[:2, :3].reshape(2, 3, 1, 1), v[:2])"),
    ("conv2d_unbatched", "F.conv2d(im[0], cw)"),
    ("conv2d_same", "F.conv2d(im, cw, padding='same')"),
    ("conv2d_same_even_kernel", "F.conv2d(im, cw[:, :, :2, :2], padding='same')"),
    ("conv2d_groups", "F.conv2d(im[:, :2], cw[:, :1], groups=2)"),
    ("conv1d", "F.conv1d(m, cw1)"),
    ("conv1d_unbatched", "F.conv1d(m[0], cw1)"),
    ("conv_transpose2d", "F.conv_transpose2d(im, cw.transpose(0, 1))"),
    ("conv_transpose1d", "F.conv_transpose1d(m, cw1.transpose(0, 1))"),
    ("conv3d", "F.conv3d(vol, cw[:, :2, :2, :2, None].expand(2, 2, 2, 2, 2).contiguous())"),
    ("max_pool2d", "F.max_pool2d(im, 2)"),
    ("max_pool2d_indices", "F.max_pool2d(im, 2, return_indices=True)"),
    ("max_pool2d_padding", "F.max_pool2d(im, 3, 2, 1)"),
    ("max_pool1d", "F.max_pool1d(m, 2)"),
    ("max_pool3d", "F.max_pool3d(vol, 2)"),
    ("avg_pool2d", "F.avg_pool2d(im, 2)"),
    ("avg_pool2d_unbatched", "F.avg_pool2d(im[0], 2)"),
    ("avg_pool1d", "F.avg_pool1d(m, 2)"),
    ("avg_pool3d", "F.avg_pool3d(vol, 2)"),
    ("adaptive_avg_pool2d_1", "F.adaptive_avg_pool2d(im, 1)"),
    ("adaptive_avg_pool2d", "F.adaptive_avg_pool2d(im, (2, 2))"),
    ("adaptive_avg_pool1d_1", "F.adaptive_avg_pool1d(m, 1)"),
    ("adaptive_avg_pool1d", "F.adaptive_avg_pool1d(m, 2)"),
    ("adaptive_avg_pool3d_1", "F.adaptive_avg_pool3d(vol, 1)"),
    ("adaptive_avg_pool3d", "F.adaptive_avg_pool3d(vol, 2)"),
    ("adaptive_max_pool2d", "F.adaptive_max_pool2d(im, 1)"),
    ("adaptive_max_pool1d", "F.adaptive_max_pool1d(m, 2)"),
    ("adaptive_max_pool3d", "F.adaptive_max_pool3d(vol, 2)"),
    ("lp_pool2d", "F.lp_pool2d(im, 2, 2)"),
    ("interpolate_nearest_1d", "F.interpolate(m, scale_factor=2)"),
    ("interpolate_nearest", "F.interpolate(im, scale_factor=2)"),
    ("interpolate_nearest_size", "F.interpolate(im, size=(7, 7))"),
    ("interpolate_nearest_exact", "F.interpolate(im, scale_factor=2, mode='nearest-exact')"),
    ("interpolate_linear", "F.interpolate(m, scale_factor=2, mode='linear')"),
    ("interpolate_bilinear", "F.interpolate(im, scale_factor=2, mode='bilinear', align_corners=False)"),
    ("interpolate_bicubic", "F.interpolate(im, scale_factor=2, mode='bicubic', align_corners=False)"),
    ("interpolate_area", "F.interpolate(im, size=(2, 2), mode='area')"),
    ("interpolate_nearest_3d", "F.interpolate(vol, scale_factor=2)"),
    ("interpolate_trilinear", "F.interpolate(vol, scale_factor=2, mode='trilinear', align_corners=False)"),
    ("pixel_shuffle", "F.pixel_shuffle(im[:, :, :4, :4].reshape(2, 12, 2, 2), 2)"),
    ("pixel_unshuffle", "F.pixel_unshuffle(im[:, :, :4, :4], 2)"),
    ("unfold_im2col", "F.unfold(im, 2)"),
    ("fold_col2im", "F.fold(F.unfold(im, 2), (5, 5), 2)"),
    ("grid_sample", "F.grid_sample(im, torch.tensor([[[[-0.5, 0.25], [0.3, -0.7]]]]).expand(2, 1, 2, 2), "
                    "align_corners=False)"),
    ("affine_grid", "F.affine_grid(x[:2, :3].reshape(1, 2, 3), (1, 1, 3, 3), align_corners=False)"),
    # ---- nn.functional: losses ----
    ("mse_loss", "F.mse_loss(x, y)"),
    ("mse_loss_sum", "F.mse_loss(x, y, reduction='sum')"),
    ("mse_loss_none", "F.mse_loss(x, y, reduction='none')"),
    ("l1_loss", "F.l1_loss(x, y)"),
    ("l1_loss_sum", "F.l1_loss(x, y, reduction='sum')"),
    ("smooth_l1_loss", "F.smooth_l1_loss(x, y)"),
    ("smooth_l1_loss_none", "F.smooth_l1_loss(x, y, reduction='none')"),
    ("smooth_l1_loss_beta0", "F.smooth_l1_loss(x, y, beta=0.0)"),
    ("huber_loss", "F.huber_loss(x, y)"),
    ("huber_loss_sum", "F.huber_loss(x, y, reduction='sum')"),
    ("bce", "F.binary_cross_entropy(x.sigmoid(), torch.full((3, 4), 0.25))"),
    ("bce_none", "F.binary_cross_entropy(x.sigmoid(), torch.full((3, 4), 0.25), reduction='none')"),
    ("bce_with_logits", "F.binary_cross_entropy_with_logits(x, torch.full((3, 4), 0.25))"),
    ("bce_with_logits_none", "F.binary_cross_entropy_with_logits(x, torch.full((3, 4), 0.25), reduction='none')"),
    ("cross_entropy", "F.cross_entropy(x, torch.tensor([0, 1, 2]))"),
    ("cross_entropy_sum", "F.cross_entropy(x, torch.tensor([0, 1, 2]), reduction='sum')"),
    ("cross_entropy_none", "F.cross_entropy(x, torch.tensor([0, 1, 2]), reduction='none')"),
    ("cross_entropy_weight", "F.cross_entropy(x, torch.tensor([0, 1, 2]), weight=torch.tensor([1., 2., 3., 4.]))"),
    ("cross_entropy_ignore", "F.cross_entropy(x, torch.tensor([0, -100, 2]))"),
    ("cross_entropy_smoothing", "F.cross_entropy(x, torch.tensor([0, 1, 2]), label_smoothing=0.1)"),
    ("cross_entropy_probabilities", "F.cross_entropy(x, torch.full((3, 4), 0.25))"),
    ("cross_entropy_probabilities_sum", "F.cross_entropy(x, torch.full((3, 4), 0.25), reduction='sum')"),
    ("cross_entropy_probabilities_none", "F.cross_entropy(x, torch.full((3, 4), 0.25), reduction='none')"),
    ("cross_entropy_3d", "F.cross_entropy(m, torch.tensor([[0, 1, 2, 0], [1, 1, 1, 1]]))"),
    ("cross_entropy_3d_none", "F.cross_entropy(m, torch.tensor([[0, 1, 2, 0], [1, 1, 1, 1]]), reduction='none')"),
    ("cross_entropy_4d", "F.cross_entropy(im, torch.zeros(2, 5, 5, dtype=torch.long))"),
    ("nll_loss", "F.nll_loss(x.log_softmax(1), torch.tensor([0, 1, 2]))"),
    ("nll_loss_none", "F.nll_loss(x, torch.tensor([0, 1, 2]), reduction='none')"),
    ("nll_loss_1d", "F.nll_loss(v, torch.tensor(1))"),
    ("kl_div_batchmean", "F.kl_div(x.log_softmax(1), y.softmax(1), reduction='batchmean')"),
    ("kl_div_mean", "F.kl_div(x, y.softmax(1))"),
    ("kl_div_none", "F.kl_div(x, y.softmax(1), reduction='none')"),
    ("kl_div_fixed_target", "F.kl_div(x, torch.full((3, 4), 0.25), reduction='sum')"),
    ("kl_div_log_target", "F.kl_div(x, y, reduction='sum', log_target=True)"),
    ("soft_margin_loss", "F.soft_margin_loss(x, torch.ones(3, 4))"),
    ("multi_margin_loss", "F.multi_margin_loss(x, torch.tensor([0, 1, 2]))"),
    ("margin_ranking_loss", "F.margin_ranking_loss(v, v * 2, torch.ones(4))"),
    ("hinge_embedding_loss", "F.hinge_embedding_loss(x, torch.ones(3, 4))"),
    ("cosine_embedding_loss", "F.cosine_embedding_loss(x, y, torch.ones(3))"),
    ("triplet_margin_loss", "F.triplet_margin_loss(x, y, y * 2)"),
    ("poisson_nll_loss", "F.poisson_nll_loss(x, y.abs())"),
    ("gaussian_nll_loss", "F.gaussian_nll_loss(x, y, torch.ones(3, 4))"),
    # ---- autograd.Function (MyExp, ScaleBy below) ----
    ("custom_function", "MyExp.apply(x)"),
    ("custom_function_two_outputs", "ScaleBy.apply(x, 2.0, y)"),
    ("custom_function_constant_input", "ScaleBy.apply(x, 2.0, torch.ones(3, 4))"),
    ("quantile", "x.quantile(0.5)"),
    ("bilinear", "F.bilinear(x, y, torch.ones(2, 4, 4))"),
    ("matmul_2d_3d", "sq @ m.transpose(1, 2)"),
    ("matmul_1d_3d", "v @ m.transpose(1, 2)"),
]

# Cases whose second derivatives (through the recorded node, create_graph) are compared as well.
DOUBLE = ("permute", "chunk", "unbind", "split_sizes", "topk", "sort", "gather", "norm_dim", "norm", "var_dim",
          "std", "var_mean", "std_mean", "logsumexp", "prod_dim", "cumsum", "cumprod", "amax", "min_dim", "maximum",
          "flip", "roll", "tril", "repeat", "masked_fill", "index_select", "lerp", "addcmul", "addcdiv", "atan2",
          "hypot", "tan", "addmm", "baddbmm", "matmul_3d_2d", "matmul_mv", "matmul_row", "linear_3d", "einsum_mm",
          "leaky_relu", "gelu", "elu", "softplus", "silu", "hardtanh", "normalize", "conv2d_bias_padding",
          "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate_bilinear", "pad_reflect_2d", "mse_loss_sum",
          "smooth_l1_loss", "bce", "bce_with_logits", "cross_entropy_smoothing", "cross_entropy_3d", "kl_div_none",
          "nll_loss_none", "group_norm_affine", "instance_norm", "remainder_tensor", "logaddexp", "rsub",
          "rdiv", "square", "rsqrt", "custom_function_two_outputs")


def _values(n, offset):
    """n pairwise distinct values in about [-2, 2], none within 0.01 of 0 (no ties, no kinks)."""
    return [((k * 37 + offset) % 211 - 105) / 50 + 0.013 for k in range(n)]


def leaves(torch):
    def leaf(shape, offset):
        n = math.prod(shape)
        return torch.tensor(_values(n, offset)).reshape(shape).requires_grad_()
    out = {"x": leaf((3, 4), 0), "y": leaf((3, 4), 11), "v": leaf((4,), 23), "m": leaf((2, 3, 4), 37),
           "im": leaf((2, 3, 5, 5), 53), "vol": leaf((1, 2, 4, 4, 4), 71), "w": leaf((4, 4), 89),
           "sq": leaf((4, 4), 101)}
    out["cw"] = torch.tensor(_values(54, 7)).reshape(2, 3, 3, 3)
    out["cb"] = torch.tensor([0.25, -0.5])
    out["cw1"] = torch.tensor(_values(12, 13)).reshape(2, 3, 2)
    return out


def functions(torch):
    """Two autograd.Functions: exp with its saved output, and (x * k * w, x + w) with a number argument."""
    class MyExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    class ScaleBy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, w):
            ctx.save_for_backward(x, w)
            ctx.k = k
            return x * k * w, x + w

        @staticmethod
        def backward(ctx, g1, g2):
            x, w = ctx.saved_tensors
            return g1 * w * ctx.k + g2, None, g1 * x * ctx.k + g2

    return {"MyExp": MyExp, "ScaleBy": ScaleBy}


def coefficient(n):
    return [((k % 7) - 3) / 2 for k in range(n)]


def node_name(fn):
    """A node's name as 1.13's type name (tinyddp's Node.name() spells AccumulateGrad with its namespace)."""
    if fn is None:
        return None
    name = fn.name() if hasattr(fn, "name") and callable(fn.name) else type(fn).__name__
    return name.replace("torch::autograd::", "")


def run(torch, code, double=False):
    """(results as a flat list, the leaves' gradients by name, and, with double, the gradients of the sum of the
    squared gradients) for the case's expression."""
    torch.manual_seed(0)
    scope = dict(leaves(torch), torch=torch, F=torch.nn.functional, **functions(torch))
    out = eval(code, scope)
    outs = list(out) if isinstance(out, tuple) else [out]
    names = sorted(k for k, t in scope.items() if isinstance(t, torch.Tensor) and t.requires_grad)
    floating = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
    if not floating:
        return outs, {}, {}
    loss = None
    for o in floating:
        term = (o * torch.tensor(coefficient(o.numel()), dtype=o.dtype).reshape(o.shape)).sum()
        loss = term if loss is None else loss + term
    inputs = [scope[k] for k in names]
    grads = torch.autograd.grad(loss, inputs, create_graph=double, allow_unused=True)
    firsts = {k: g for k, g in zip(names, grads) if g is not None}
    seconds = {}
    if double:
        wanted = [g for g in grads if g is not None and g.requires_grad]
        if wanted:
            total = None
            for g in wanted:
                total = (g * g).sum() if total is None else total + (g * g).sum()
            seconds = {k: s for k, s in zip(names, torch.autograd.grad(total, inputs, allow_unused=True))
                       if s is not None}
    return outs, firsts, seconds
