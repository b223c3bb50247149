"""test_threads.py - many Python threads on one client and on many clients."""

import threading

import numpy as np

import vaccel
from conftest import ADD_MODEL, EXAMPLES, MLP_MODEL, QUEUE_LIMIT, add_inputs

THREADS = 8
ROUNDS = 60


def run_threads(work):
    """Runs work(index) on THREADS threads at once; re-raises the first failure."""
    failures = []
    start = threading.Barrier(THREADS)

    def body(index):
        try:
            start.wait()
            work(index)
        except BaseException as failure:  # reported in the main thread
            failures.append(failure)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def test_one_program_on_one_client_from_many_threads(client):
    add = client.load(ADD_MODEL, device="cpu")
    mlp = client.load(MLP_MODEL, device="cpu")
    a, b, expected = add_inputs()
    x = np.load(EXAMPLES / "input.npy")
    reference = mlp(x=x)["y"]  # the single-threaded result, to the bit
    exact = [0] * THREADS

    def work(index):
        for _ in range(ROUNDS):
            assert np.array_equal(add.run([a, b])[0], expected)
            assert np.array_equal(mlp(x=x)["y"], reference)
            exact[index] += 1

    run_threads(work)
    assert exact == [ROUNDS] * THREADS
    assert 1 <= add._core.lanes <= THREADS  # one lane per concurrent run at most
    # Both programs' runs share the client's queues, within the limit (runs
    # that met it waited for a queue instead of failing).
    queues = client._core.queues(add._core.context)
    assert mlp._core.context == add._core.context
    assert 1 <= queues <= min(THREADS, QUEUE_LIMIT)


def test_zero_copy_runs_from_many_threads(client):
    add = client.load(ADD_MODEL, device="cpu")
    _, b, _ = add_inputs()

    def work(index):
        first, second = add.buffer("TosaInput_0"), add.buffer("TosaInput_1")
        output = add.buffer("TosaOutput_0")
        result = np.asarray(output)
        for round_ in range(ROUNDS):
            shift = np.float32(index * 1000 + round_)
            np.asarray(first)[...] = shift
            np.asarray(second)[...] = b
            add.run([first, second], outputs=[output])
            assert np.array_equal(result, b + shift)

    run_threads(work)


def test_separate_clients_in_many_threads():
    a, b, expected = add_inputs()
    x = np.load(EXAMPLES / "input.npy")
    with vaccel.Client() as reference_client:
        reference = reference_client.load(MLP_MODEL, device="cpu")(x=x)["y"]

    def work(index):
        with vaccel.Client() as own:
            add = own.load(ADD_MODEL, device="cpu")
            mlp = own.load(MLP_MODEL, device="cpu")
            for _ in range(ROUNDS):
                assert np.array_equal(add(TosaInput_0=a, TosaInput_1=b)["TosaOutput_0"],
                                      expected)
                assert np.array_equal(mlp.run([x])[0], reference)

    run_threads(work)


def test_closing_a_program_while_threads_run_it(client):
    add = client.load(ADD_MODEL, device="cpu")
    a, b, expected = add_inputs()
    outcomes = []

    def work(index):
        for _ in range(ROUNDS):
            try:
                result = add.run([a, b])[0]
            except vaccel.InvalidArgument as refused:
                assert refused.detail == vaccel.D_UNKNOWN_HANDLE, str(refused)
                outcomes.append("refused")
                return
            assert np.array_equal(result, expected)
            outcomes.append("ran")
            if index == 0:
                add.close()  # waits for the runs in progress, refuses the later ones

    run_threads(work)
    assert add.closed
    assert "ran" in outcomes
