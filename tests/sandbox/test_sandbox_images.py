"""What scripts written for SWE-bench's images expect of an episode: conda (the shim at
/opt/miniconda3), a writable /var/tmp, the environment first on PATH in login shells, pip offline."""

from __future__ import annotations

import pytest

from sweworld.sandbox import Dir, Layers, Sandbox, SandboxConfig

pytestmark = pytest.mark.bwrap


@pytest.fixture
def mounts(small_tree, tmp_path):
    """The tree at /testbed and a stand-in environment at /sweworld/venv (its python: the host's)."""
    tree, _ = small_tree
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to("/usr/bin/python3")
    return {"/testbed": Layers([tree]), "/sweworld/venv": Dir(tmp_path / "venv")}


def test_conda_activate_testbed_works_on_the_episodes_environment(small_tree, mounts):
    with Sandbox(mounts, base_commit=small_tree[1]) as sb:
        result = sb.run("source /opt/miniconda3/bin/activate && conda activate testbed && echo ACTIVE=$CONDA_DEFAULT_ENV"
                        " && conda run -n testbed --no-capture-output echo ran && conda deactivate && echo done")
        assert result.ok and "ACTIVE=testbed" in result.output and "ran\n" in result.output, result.output
        program = sb.run("/opt/miniconda3/bin/conda run -n testbed echo via-program; "
                         "test -x /opt/miniconda3/envs/testbed/bin/python && echo linked")
        assert "via-program" in program.output and "linked" in program.output
        refused = sb.run("source /opt/miniconda3/bin/activate; conda install numpy")
        assert refused.exit_code == 1 and "not available in a sweworld episode" in refused.output
        assert sb.run("touch /opt/miniconda3/bin/x").exit_code != 0  # the shim is read-only


def test_var_tmp_is_writable_and_private_and_login_shells_keep_the_venv(small_tree, mounts):
    with Sandbox(mounts, base_commit=small_tree[1]) as a, Sandbox(mounts, base_commit=small_tree[1]) as b:
        assert a.run("mkdir -p /var/tmp/.x && echo hi > /var/tmp/.x/f && cat /var/tmp/.x/f").output == "hi\n"
        assert b.run("ls /var/tmp/.x 2>&1").exit_code != 0  # each episode has its own
        login = a.run("bash --login -c 'echo $PATH'")
        assert login.output.startswith("/sweworld/venv/bin:"), login.output


def test_scratch_dirs_and_the_shim_can_be_turned_off(small_tree):
    tree, commit = small_tree
    config = SandboxConfig(scratch_dirs=["/logs/verifier"], conda_shim=False)
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=config) as sb:
        assert sb.run("echo 1 > /logs/verifier/reward.txt && cat /logs/verifier/reward.txt").output == "1\n"
        assert sb.run("test -e /opt/miniconda3").exit_code != 0
        assert sb.run("touch /var/tmp/x").exit_code != 0  # not asked for: read-only like the rest


def test_a_scratch_dir_above_host_paths_keeps_them_visible(small_tree):
    """SWE-agent writes under /root, where this machine's interpreters may live (pyenv): the scratch
    /root is writable and the interpreter paths bound below it still run."""
    import sys
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit,
                 config=SandboxConfig(scratch_dirs=["/var/tmp", "/root"])) as sb:
        result = sb.run("mkdir -p /root/tools && echo ok > /root/state.json && cat /root/state.json")
        assert result.output == "ok\n", result.output
        assert sb.run(f"test -x {sys.base_prefix}/bin/python3 || test ! -d {sys.base_prefix}").exit_code == 0
