"""Starts the ranks of a command the way a launcher does, for comm.test.

  launch.py STYLE N [--ranks R,R,...] COMMAND [::: COMMAND ...]

runs N processes at once, each with the environment STYLE's launcher gives
its processes: torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT), mpirun (Open MPI's OMPI_COMM_WORLD_*) or pmi (MPICH's
PMI_RANK, PMI_SIZE). Process i runs COMMAND, or the i-th of N commands
separated by ':::', as rank i, or as the i-th of --ranks (which may repeat
or leave out ranks of the world of N). Their output goes to ours; the exit
status is the first non-zero one of the processes, in order.
"""

import os
import subprocess
import sys


def environment(style, rank, size):
    if style == "torchrun":
        return {
            "RANK": str(rank),
            "WORLD_SIZE": str(size),
            "LOCAL_RANK": str(rank),
            "LOCAL_WORLD_SIZE": str(size),
            "MASTER_ADDR": "127.0.0.1",
            # A port of this launch's own, as torchrun's rendezvous has.
            "MASTER_PORT": str(10000 + os.getpid() % 50000),
        }
    if style == "mpirun":
        return {
            "OMPI_COMM_WORLD_RANK": str(rank),
            "OMPI_COMM_WORLD_SIZE": str(size),
            "OMPI_COMM_WORLD_LOCAL_RANK": str(rank),
        }
    if style == "pmi":
        return {"PMI_RANK": str(rank), "PMI_SIZE": str(size)}
    raise SystemExit(f"unknown launcher style '{style}'")


def main():
    style, size, arguments = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    ranks = list(range(size))
    if arguments[0] == "--ranks":
        ranks = [int(rank) for rank in arguments[1].split(",")]
        arguments = arguments[2:]
    commands = [[]]
    for argument in arguments:
        if argument == ":::":
            commands.append([])
        else:
            commands[-1].append(argument)
    if len(commands) == 1:
        commands *= len(ranks)
    if len(commands) != len(ranks):
        raise SystemExit(f"{len(commands)} commands for {len(ranks)} processes")
    processes = [
        subprocess.Popen(command, env={**os.environ, **environment(style, rank, size)})
        for rank, command in zip(ranks, commands)
    ]
    statuses = [process.wait() for process in processes]
    sys.exit(next((status for status in statuses if status), 0))


if __name__ == "__main__":
    main()
