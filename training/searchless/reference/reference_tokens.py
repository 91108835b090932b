"""Reference token ids and action ids from the authors' tokenizer.py and utils.py, for every standard-chess
game of the repo's PGN fixtures: one FNV-1a 64 hash per game over all its main-line positions
(tests/fixtures/searchless/reference-tokens.tsv), and their 1968 moves in action order (actions.txt).
Run with their repository importable as searchless_chess (see make_checkpoint.py)."""
import glob, os, sys
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
import chess, chess.pgn
from searchless_chess.src import tokenizer, utils

root = os.path.join(REPO, "tests/fixtures/pgn")
out = os.path.join(REPO, "tests/fixtures/searchless")
with open(os.path.join(out, "actions.txt"), "w") as f:
    for a in range(utils.NUM_ACTIONS):
        f.write(utils.ACTION_TO_MOVE[a] + "\n")

def fnv(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

lines, positions, skipped = [], 0, 0
for path in sorted(glob.glob(root + "/*.pgn") + glob.glob(root + "/*/*.pgn")):
    rel = os.path.relpath(path, root)
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        while True:
            try:
                g = chess.pgn.read_game(f)
            except Exception:
                skipped += 1; continue
            if g is None: break
            if g.errors or g.headers.get("Variant", "Standard").lower() not in ("standard", "from position"):
                skipped += 1; continue
            b = g.board()
            if b.chess960 or b.has_chess960_castling_rights():
                skipped += 1; continue
            h = 0xcbf29ce484222325
            boards = [b.copy()]
            for mv in g.mainline_moves():
                b.push(mv); boards.append(b.copy())
            try:
                for bb in boards:
                    ids = tokenizer.tokenize(bb.fen())
                    acts = sorted(utils.MOVE_TO_ACTION[m.uci()] for m in bb.legal_moves)
                    h = fnv(h, bytes(int(x) for x in ids))
                    h = fnv(h, b"".join(a.to_bytes(2, "little") for a in acts) + b"\xff")
            except (AssertionError, KeyError):
                skipped += 1; continue
            positions += len(boards)
            lines.append(f"{rel}\t{len(boards) - 1}\t{boards[-1].fen()}\t{h:016x}")
with open(os.path.join(out, "reference-tokens.tsv"), "w") as f:
    f.write("# file\tplies\tfinal FEN\tFNV-1a 64 over every main-line position: 77 token ids (u8), then the sorted legal action ids (u16 LE), then 0xff\n")
    f.write("\n".join(lines) + "\n")
print("games", len(lines), "positions", positions, "skipped", skipped)
