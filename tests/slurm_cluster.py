"""A one-node Slurm cluster on 127.0.0.1 for the pipeline test: Debian's slurm-wlm and munge,
installed if missing (root and a reachable package mirror), daemons started from a config in a
temp dir and stopped by their pid files afterwards.

`SlurmUnavailable` means Slurm could not be installed or started here (the test skips);
anything after a working cluster is up is a test failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


class SlurmUnavailable(RuntimeError):
    pass


def _run(command: list[str], timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)


def ensure_installed() -> None:
    if shutil.which("slurmctld") and shutil.which("slurmd") and shutil.which("munged"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise SlurmUnavailable("slurm-wlm is not installed, and installing it needs root and apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "slurm-wlm", "munge"]
    try:
        if _run(install, timeout=900, env=env).returncode != 0:
            _run(["apt-get", "update", "-q"], timeout=300, env=env)
            result = _run(install, timeout=900, env=env)
            if result.returncode != 0:
                raise SlurmUnavailable(f"apt-get install slurm-wlm failed: {result.stderr.strip()[-500:]}")
    except subprocess.TimeoutExpired:
        raise SlurmUnavailable("apt-get install slurm-wlm timed out") from None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalSlurm:
    """slurmctld + slurmd for one node with this machine's CPUs and no GPUs."""

    def __init__(self, root: Path):
        self.root = root
        self.conf = root / "slurm.conf"
        self.host = socket.gethostname().split(".")[0]
        self.started_munged = False
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def start(self) -> LocalSlurm:
        ensure_installed()
        self._start_munge()
        for folder in ("state", "spool"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(self._config())
        for daemon in (["slurmctld", "-f", str(self.conf)], ["slurmd", "-f", str(self.conf), "-N", self.host]):
            result = _run(daemon, env=self.env)
            if result.returncode != 0:
                self.stop()
                raise SlurmUnavailable(f"{daemon[0]} did not start: {result.stderr.strip()[-500:]}\n{self.logs()}")
        deadline = time.time() + 60
        while time.time() < deadline:
            state = _run(["sinfo", "-h", "-N", "-o", "%t"], env=self.env).stdout.strip()
            if state in ("idle", "mix", "alloc"):
                return self
            time.sleep(1)
        self.stop()
        raise SlurmUnavailable(f"the node never became idle (sinfo: {state!r})\n{self.logs()}")

    def _start_munge(self) -> None:
        if _run(["munge", "-n"]).returncode == 0:
            return  # a munged is already serving
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            key.parent.mkdir(parents=True, exist_ok=True)
            key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        result = _run(["runuser", "-u", "munge", "--", "munged"])
        if result.returncode != 0:
            raise SlurmUnavailable(f"munged did not start: {result.stderr.strip()}")
        self.started_munged = True

    def _config(self) -> str:
        cpus = os.cpu_count() or 1
        return "\n".join(
            [
                "ClusterName=hindsight-test",
                f"SlurmctldHost={self.host}(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"StateSaveLocation={self.root / 'state'}",
                f"SlurmdSpoolDir={self.root / 'spool'}",
                f"SlurmctldPidFile={self.root / 'slurmctld.pid'}",
                f"SlurmdPidFile={self.root / 'slurmd.pid'}",
                f"SlurmctldLogFile={self.root / 'slurmctld.log'}",
                f"SlurmdLogFile={self.root / 'slurmd.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "MpiDefault=none",
                "JobAcctGatherType=jobacct_gather/none",
                "SchedulerType=sched/backfill",
                "SchedulerParameters=kill_invalid_depend",  # dependants of a failed job end instead of waiting
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "ReturnToService=2",
                "MinJobAge=3600",
                f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
                "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )

    def job_states(self, job_ids: list[str]) -> dict[str, list[str]]:
        """Every job's state; an array job gives one per task."""
        states = {}
        for job_id in job_ids:
            out = _run(["scontrol", "-o", "show", "job", job_id], env=self.env).stdout
            states[job_id] = [
                field.split("=", 1)[1]
                for line in out.splitlines()
                for field in line.split()
                if field.startswith("JobState=")
            ]
        return states

    def wait(self, job_ids: list[str], timeout: float) -> dict[str, list[str]]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            states = self.job_states(job_ids)
            if all(
                s and all(x in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY") for x in s)
                for s in states.values()
            ):
                return states
            time.sleep(2)
        return self.job_states(job_ids)

    def logs(self) -> str:
        parts = []
        for name in ("slurmctld.log", "slurmd.log"):
            path = self.root / name
            if path.exists():
                parts.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(parts)

    def stop(self) -> None:
        if shutil.which("scancel"):
            _run(["scancel", "--user", "root"], env=self.env)
        for name in ("slurmd.pid", "slurmctld.pid"):
            _kill_from(self.root / name)
        if self.started_munged:
            _kill_from(Path("/run/munge/munged.pid"))


def _kill_from(pid_file: Path) -> None:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
