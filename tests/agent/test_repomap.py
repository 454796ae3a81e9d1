"""agent/repomap.py over real git: declarations per language, the map at a revision (not the
work tree), the token budget on a large repository, and the bounds on git's output."""

import re
from pathlib import Path

import pytest

from agent import repomap
from agent.tools.code import GitCodeTools
from tests.gitrepo import git

SOURCES = {
    "app/models.py": "import x\n\nclass Order:\n    def total(self):\n        pass\n\n"
    "async def load(id):\n    pass\n",
    "cmd/server/main.go": "package main\n\ntype Server struct{}\n\n"
    "func (s *Server) Handle(w int) {}\n\nfunc main() {}\nfunc Start() {}\n",
    "src/main/java/a/OrderService.java": "package a;\n\npublic class OrderService {\n"
    "    public Order create(Req r) {\n        return null;\n    }\n"
    "    private static int count(List<Order> o) { return 0; }\n}\n",
    "src/Money.kt": "data class Money(val v: Long)\n\nfun Money.toMinor(): Long = v\n"
    "enum class Status { OK }\n",
    "web/routes.ts": "export function route() {}\nexport const handler = async (req) => {}\n"
    "export class Api {\n  get(id: string) {}\n}\nexport interface Body {}\n",
    "app/services/coupon.rb": "class CouponService\n  def apply(code)\n  end\nend\n",
    "app/Http/InvoiceController.php": "<?php\nfinal class InvoiceController\n{\n"
    "    public function store($r) {}\n}\n",
    "src/lib.rs": "pub struct Cart {}\npub fn total() {}\nimpl Cart {}\n",
    "README.md": "class Nothing is declared in prose\n",
}


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str, str]:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    for path, text in SOURCES.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "first")
    first = git(work, "rev-parse", "HEAD")
    (work / "app" / "later.py").write_text("def added_later():\n    pass\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "second")
    # The work tree is not what the map reads: an uncommitted file never shows.
    (work / "app" / "uncommitted.py").write_text("def nope():\n    pass\n")
    return work, first, git(work, "rev-parse", "HEAD")


async def test_the_map_names_declarations_of_each_language_at_the_revision(repo):
    work, first, _ = repo
    found = await repomap.build(GitCodeTools(work, "o/r"), first)
    text = found.text
    assert found.revision == first and text.startswith(f"Repository map at {first[:12]}")
    for line in (
        "  models.py: class Order, load [total]",
        "  main.go: type Server, Server.Handle, main, Start",
        "  OrderService.java: class OrderService [create, count]",
        "  Money.kt: class Money, toMinor, enum Status",
        "  routes.ts: route, handler, class Api, interface Body",
        "  coupon.rb: class CouponService [apply]",
        "  InvoiceController.php: class InvoiceController [store]",
        "  lib.rs: struct Cart, total",
    ):
        assert line in text, line
    assert "README.md" in text and "Nothing" not in text
    assert "later.py" not in text and "uncommitted" not in text
    assert found.files == len(SOURCES) and not found.truncated


def big_repo(tmp_path: Path, folders: int, per_folder: int) -> Path:
    work = tmp_path / "big"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    for f in range(folders):
        folder = work / "pkg" / f"mod{f:03d}"
        folder.mkdir(parents=True)
        for i in range(per_folder):
            body = f"class Thing{f}x{i}:\n    def run(self):\n        pass\n\ndef helper{i}():\n"
            (folder / f"file{i:03d}.py").write_text(body + "    pass\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "many files")
    return work


async def test_a_large_repository_fits_the_budget_with_the_files_read_in_full(tmp_path):
    work = big_repo(tmp_path, folders=40, per_folder=15)  # 600 files
    focus = ["pkg/mod032/file007.py"]
    found = await repomap.build(GitCodeTools(work, "o/r"), "HEAD", tokens=600, focus=focus)
    assert found.files == 600 and found.definitions == 1800
    assert len(found.text) <= 600 * repomap.CHARS_PER_TOKEN
    # The folder of the file already read keeps its declarations; the others are counted.
    assert "  file007.py: class Thing32x7, helper7 [run]" in found.text
    assert re.search(r"^pkg/mod0\d\d/ \(15 files\)$", found.text, re.MULTILINE)
    assert "  file000.py, file001.py, file002.py" in found.text  # names only, on one line


async def test_git_output_is_bounded_and_the_map_says_it_was_cut(tmp_path):
    work = big_repo(tmp_path, folders=10, per_folder=20)
    found = await repomap.build(GitCodeTools(work, "o/r"), "HEAD", max_bytes=4_000)
    assert found.truncated
    assert "cut at its size or time limit" in found.text
    assert 0 < found.files < 200


def test_render_is_deterministic_and_lists_root_files():
    defs = [repomap.Definition("a/b.py", 1, "class", "B", False)]
    text = repomap.render("f" * 40, ["a/b.py", "setup.cfg"], defs, budget_chars=10_000)
    assert text == repomap.render("f" * 40, ["a/b.py", "setup.cfg"], defs, budget_chars=10_000)
    assert text.splitlines()[1:] == ["./", "  setup.cfg", "a/", "  b.py: class B"]
