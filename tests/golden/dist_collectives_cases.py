"""dist_collectives.json's cases, written once: gen_dist_collectives.py runs them on every rank of real PyTorch 1.13
gloo (forked processes) and tests/python/test_dist_collectives.py on tinyddp's rank threads; each takes the
torch-like module and its distributed package. run_cases returns, per case, the values or "Type: message"."""


def _err(fn):
    try:
        fn()
        return "no error"
    except Exception as e:   # noqa: BLE001  (the type and text are the golden)
        return f"{type(e).__name__}: {e}"


def run_cases(torch, dist, rank, world):
    out = {}
    W = world
    ramp = lambda n, dtype=torch.float32: (torch.arange(n) * 1000 + rank + 1).to(dtype)   # noqa: E731

    # reduce: dst holds the result; the other ranks what gloo leaves there (dist/collectives.cpp's Note)
    for n in (1, 3, 5, 9, 16):
        for dst in range(W):
            t = ramp(n)
            dist.reduce(t, dst=dst)
            out[f"reduce_sum_{n}_{dst}"] = t.tolist()
    for op in ("PRODUCT", "MIN", "MAX"):
        t = ramp(7, torch.int64) * (1 - 2 * (rank % 2))
        dist.reduce(t, dst=W - 1, op=getattr(dist.ReduceOp, op))
        out[f"reduce_{op}"] = t.tolist()
    t = ramp(4, torch.float64)
    w = dist.reduce(t, dst=0, async_op=True)
    out["reduce_async"] = [type(w).__name__, w.wait(), w.is_completed(), t.tolist()]

    # gather and scatter
    g = [torch.zeros(2) for _ in range(W)] if rank == 1 else None
    dist.gather(torch.tensor([rank * 1.0, rank + 0.5]), g, dst=1)
    out["gather"] = [x.tolist() for x in g] if g is not None else None
    o = torch.zeros(2, 2)
    dist.scatter(o, [torch.full((2, 2), 10.0 * k) for k in range(W)] if rank == 0 else None, src=0)
    out["scatter"] = o.tolist()
    o = torch.zeros(3, dtype=torch.int64)
    w = dist.scatter(o, [torch.arange(3) + k for k in range(W)] if rank == W - 1 else None, src=W - 1, async_op=True)
    out["scatter_async"] = [w.wait(), o.tolist()]
    o = torch.zeros(2)
    dist.scatter(o, src=0, scatter_list=[torch.ones(2) * k for k in range(W)] if rank == 0 else [])
    out["scatter_empty_list_elsewhere"] = o.tolist()

    # all_to_all_single (gloo has it; all_to_all is refused below)
    o = torch.zeros(2 * W)
    dist.all_to_all_single(o, torch.arange(2.0 * W) + 100 * rank)
    out["all_to_all_single"] = o.tolist()
    in_splits = [k + 1 for k in range(W)]           # rank r sends k+1 elements to rank k
    out_splits = [rank + 1] * W                     # and gets rank+1 from everyone
    o = torch.zeros(sum(out_splits))
    dist.all_to_all_single(o, torch.arange(float(sum(in_splits))) + 100 * rank, out_splits, in_splits)
    out["all_to_all_single_splits"] = o.tolist()

    # point to point: a ring, tags, receive from any rank
    got = torch.zeros(2)
    if rank % 2 == 0:
        dist.send(torch.tensor([rank, 7.0]), dst=(rank + 1) % W)
        src = dist.recv(got, src=(rank - 1) % W)
    else:
        src = dist.recv(got, src=(rank - 1) % W)
        dist.send(torch.tensor([rank, 7.0]), dst=(rank + 1) % W)
    out["ring"] = [src, got.tolist()]
    if rank == 0:
        srcs = []
        for tag in range(W - 1, 0, -1):
            x = torch.zeros(1)
            srcs.append([dist.recv(x, tag=tag), x.tolist()])
        out["recv_any"] = srcs
    else:
        out["recv_any"] = dist.send(torch.tensor([rank * 3.0]), dst=0, tag=rank)
    x = torch.zeros(3)
    if rank == 0:
        works = [dist.isend(torch.tensor([1.0, 2.0, 3.0]) * k, dst=1, tag=k) for k in (1, 2)]
        out["isend"] = [[type(w).__name__, w.wait(), w.is_completed()] for w in works]
    elif rank == 1:
        w2 = dist.irecv(x, src=0, tag=2)
        w2.wait()
        first = x.tolist()
        w1 = dist.irecv(x, src=0, tag=1)
        out["isend"] = [type(w1).__name__, w1.wait(), w1.is_completed(), first, x.tolist()]
    dist.barrier()

    # batch_isend_irecv: a ring, each rank's send listed before its receive
    nxt, prv = (rank + 1) % W, (rank - 1) % W
    got = torch.zeros(2)
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.tensor([rank, 1.0]) * 3, nxt),
                                    dist.P2POp(dist.irecv, got, prv)])
    out["batch_isend_irecv"] = [len(works), [w.wait() for w in works], got.tolist()]
    out["p2p_op_errors"] = [_err(lambda: dist.P2POp(dist.send, torch.zeros(1), nxt)),
                            _err(lambda: dist.P2POp(dist.isend, [1.0], nxt)),
                            _err(lambda: dist.batch_isend_irecv([1]))]
    out["group_ranks"] = [dist.get_global_rank(dist.group.WORLD, W - 1), dist.get_group_rank(dist.group.WORLD, 0),
                          dist.get_process_group_ranks(dist.group.WORLD)]
    dist.barrier()

    # a subgroup of ranks 0 and W-1 (asked for in the other order: new_group sorts them); rank 1 of 3 is outside
    sub = dist.new_group([W - 1, 0])
    out["subgroup"] = [dist.get_rank(sub), dist.get_world_size(sub), sub is dist.GroupMember.NON_GROUP_MEMBER]
    if rank in (0, W - 1):
        t = torch.tensor([rank + 1.0])
        dist.all_reduce(t, group=sub)
        b = torch.tensor([rank * 1.0])
        dist.broadcast(b, src=W - 1, group=sub)
        r = ramp(5)
        dist.reduce(r, dst=W - 1, group=sub)
        g = [torch.zeros(1) for _ in range(2)] if rank == 0 else None
        dist.gather(torch.tensor([rank * 1.0]), g, dst=0, group=sub)
        objs = [None, None]
        dist.all_gather_object(objs, rank * 10, group=sub)
        out["subgroup_values"] = [t.tolist(), b.tolist(), r.tolist(), g and [x.tolist() for x in g], objs,
                                  dist.get_global_rank(sub, 1), dist.get_group_rank(sub, W - 1),
                                  dist.get_process_group_ranks(sub)]
        x = torch.zeros(1)
        if rank == 0:
            dist.send(torch.tensor([5.0]), dst=W - 1, group=sub)
            out["subgroup_p2p"] = dist.recv(x, group=sub)
        else:
            out["subgroup_p2p"] = [dist.recv(x, src=0, group=sub), x.tolist()]
            dist.send(torch.tensor([6.0]), dst=0, group=sub)
        if rank == 0:
            out["subgroup_bad"] = _err(lambda: dist.gather(torch.zeros(1), [torch.zeros(1)] * 3, dst=0, group=sub))
    else:
        out["non_member"] = [dist.all_reduce(torch.ones(1), group=sub), dist.barrier(group=sub),
                             dist.broadcast(torch.ones(1), src=0, group=sub)]
    out["new_group_bad"] = [_err(lambda: dist.new_group([0, W])), _err(lambda: dist.new_group(list(range(W + 1))))]
    dist.barrier()

    # objects and barriers
    objs = [None] * W if rank == 0 else None
    dist.gather_object({"rank": rank, "sq": rank * rank}, objs, dst=0)
    out["gather_object"] = objs
    lst = [None]
    dist.scatter_object_list(lst, [f"obj{k}" for k in range(W)] if rank == 1 else None, src=1)
    out["scatter_object_list"] = lst
    out["monitored_barrier"] = dist.monitored_barrier()
    out["monitored_barrier_all"] = dist.monitored_barrier(wait_all_ranks=True)
    w = dist.barrier(async_op=True)
    out["barrier_async"] = [type(w).__name__, w.wait()]
    t = torch.ones(2)
    w = dist.all_reduce(t, async_op=True)
    out["all_reduce_async"] = [type(w).__name__, w.wait(), w.is_completed(), t.tolist()]
    lst = [torch.zeros(1) for _ in range(W)]
    w = dist.all_gather(lst, torch.tensor([rank * 2.0]), async_op=True)
    out["all_gather_async"] = [w.wait(), [x.tolist() for x in lst]]
    t = torch.tensor([rank * 1.0])
    w = dist.broadcast(t, src=W - 1, async_op=True)
    out["broadcast_async"] = [w.wait(), t.tolist()]

    # Backend
    B = dist.Backend
    out["backend"] = [B.GLOO, B.NCCL, B.MPI, B.UNDEFINED, str(B.GLOO), repr(B.GLOO), type(B("GLOO")).__name__,
                      B("GLOO"), B("Gloo") == "gloo", B.GLOO == B("gloo"), dist.get_backend() == B.GLOO,
                      _err(lambda: B("foo")), _err(lambda: B(3)), B(B.NCCL)]

    # what 1.13's gloo does not have
    l2 = [torch.zeros(1) for _ in range(W)]
    out["unsupported"] = [
        _err(lambda: dist.reduce_scatter(torch.zeros(1), [torch.ones(1) for _ in range(W)])),
        _err(lambda: dist.all_to_all(l2, [torch.ones(1) for _ in range(W)])),
        _err(lambda: dist.all_gather_into_tensor(torch.zeros(W), torch.ones(1))),
        _err(lambda: dist._all_gather_base(torch.zeros(W), torch.ones(1))),
        _err(lambda: dist.reduce_scatter_tensor(torch.zeros(1), torch.ones(W))),
        _err(lambda: dist._reduce_scatter_base(torch.zeros(1), torch.ones(W))),
    ]

    # bad input: every rank that calls it fails before any message, so the others are not left waiting
    out["bad_root"] = [
        _err(lambda: dist.reduce(torch.zeros(1), dst=W)),
        _err(lambda: dist.reduce(torch.zeros(1), dst=-1)),
        _err(lambda: dist.broadcast(torch.zeros(1), src=W)),
        _err(lambda: dist.scatter(torch.zeros(1), None, src=W)),
        _err(lambda: dist.gather(torch.zeros(1), None, dst=W + 1)),
        _err(lambda: dist.send(torch.zeros(1), dst=W)),
        _err(lambda: dist.isend(torch.zeros(1), dst=W + 2)),
        _err(lambda: dist.recv(torch.zeros(1), src=W)),
        _err(lambda: dist.irecv(torch.zeros(1), src=W + 1)),
    ]
    if rank == 0:   # only the root checks its list: the others would wait in the collective
        out["bad_lists_root"] = [
            _err(lambda: dist.scatter(torch.zeros(2), None, src=0)),
            _err(lambda: dist.scatter(torch.zeros(2), [torch.zeros(2)] * (W + 1), src=0)),
            _err(lambda: dist.scatter(torch.zeros(2), [torch.zeros(3)] * W, src=0)),
            _err(lambda: dist.scatter(torch.zeros(2), [torch.zeros(2, dtype=torch.float64)] * W, src=0)),
            _err(lambda: dist.gather(torch.zeros(2), None, dst=0)),
            _err(lambda: dist.gather(torch.zeros(2), [torch.zeros(2)] * (W - 1), dst=0)),
            _err(lambda: dist.gather(torch.zeros(2), [torch.zeros(3)] * W, dst=0)),
            _err(lambda: dist.gather_object(1, None, dst=0)),
            _err(lambda: dist.scatter_object_list([None], None, src=0)),
        ]
    else:
        out["bad_lists_other"] = [
            _err(lambda: dist.scatter(torch.zeros(2), [torch.zeros(2)] * W, src=0)),
            _err(lambda: dist.gather(torch.zeros(2), [torch.zeros(2)] * W, dst=0)),
        ]
    # (all_to_all_single's size errors surface in gloo's worker thread, at the next collective: not cases)
    dist.barrier()
    return out
