"""mavboard as a UCI engine under a strict client: python-chess's chess.engine.

Run by tests/cli/uci_python_chess.rs (with .venv-uci/bin/python; `./packaging/dev.sh test` creates it):

    match_stockfish.py MAVBOARD STOCKFISH OUT_PGN [--games N] [--plies N] [--nodes N]

1. Analyses three positions with MultiPV 3 and UCI_ShowWDL on and checks what python-chess parsed: three
   numbered lines, each with a legal PV, a score and a W/D/L that adds up to 1000 and agrees with the score's
   expected points; a mate in one comes back as a mate score.
2. Plays N games of mavboard (the shipped model, N nodes a move, WDL on) against Stockfish (depth 1),
   colours alternating, each game stopped after --plies plies. Before each of its moves mavboard analyses
   the position with MultiPV 2 (checked as above); every move must be legal and come with score and W/D/L. The games are written to OUT_PGN.

python-chess raises on any malformed line the engine sends, and on a bestmove that is not legal; any such
error, or a failed check, ends the script with a message and a non-zero exit code.
"""

import argparse
import math
import sys

import chess
import chess.engine
import chess.pgn

MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"
MATE_NODES = 400
POSITIONS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    MATE_IN_ONE,
]


def fail(message: str) -> None:
    """Ends the script with `message`."""
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check_line(board: chess.Board, info: dict, rank: int) -> None:
    """Checks one MultiPV line as python-chess parsed it."""
    where = f"{board.fen()} line {rank}"
    if info.get("multipv") != rank:
        fail(f"{where}: multipv {info.get('multipv')}")
    pv = info.get("pv")
    if not pv:
        fail(f"{where}: no pv in {info}")
    probe = board.copy()
    for move in pv:
        if move not in probe.legal_moves:
            fail(f"{where}: {move} of the pv is not legal")
        probe.push(move)
    score = info.get("score")
    wdl = info.get("wdl")
    if score is None or wdl is None:
        fail(f"{where}: score {score}, wdl {wdl}")
    w, d, l = wdl.relative.wins, wdl.relative.draws, wdl.relative.losses
    if w + d + l != 1000:
        fail(f"{where}: wdl {w} {d} {l} does not add up to 1000")
    relative = score.relative
    if relative.is_mate():
        if (relative.mate() > 0) != (w == 1000):
            fail(f"{where}: mate score {relative} with wdl {w} {d} {l}")
    else:
        # mavboard's centipawns invert the Lichess formula: points = 1 / (1 + exp(-0.00368208 cp)).
        points = 1.0 / (1.0 + math.exp(-0.00368208 * relative.score()))
        if abs(points - (w + d / 2) / 1000) > 0.01:
            fail(f"{where}: score {relative} is {points:.3f} points, wdl {w} {d} {l} is not")
    for key in ("depth", "seldepth", "nodes", "nps", "time", "hashfull"):
        if key not in info:
            fail(f"{where}: no {key} in {info}")


def analyse(engine: chess.engine.SimpleEngine, nodes: int) -> None:
    """Step 1: MultiPV 3 analysis with W/D/L."""
    for fen in POSITIONS:
        board = chess.Board(fen)
        # The mate must be found by the search, not the model: the shipped model values the mating rook move
        # among the lowest of this won ending, and the search needs a few hundred nodes to visit it.
        budget = max(nodes, MATE_NODES) if fen == MATE_IN_ONE else nodes
        lines = engine.analyse(board, chess.engine.Limit(nodes=budget), multipv=3)
        if len(lines) != 3:
            fail(f"{fen}: {len(lines)} lines for MultiPV 3")
        for rank, info in enumerate(lines, start=1):
            check_line(board, info, rank)
        if fen == MATE_IN_ONE:
            best = lines[0]
            if best["pv"][0] != chess.Move.from_uci("d1d8") or best["score"].relative != chess.engine.Mate(1):
                fail(f"mate in one: {best['pv'][0]} {best['score']}")
    print(f"analysis: {len(POSITIONS)} positions, 3 lines each, checked")


def play(mavboard: chess.engine.SimpleEngine, stockfish: chess.engine.SimpleEngine, args) -> list:
    """Step 2: the match; returns the games."""
    games = []
    for number in range(args.games):
        board = chess.Board()
        game = chess.pgn.Game()
        mav_white = number % 2 == 0
        game.headers["Event"] = "mavboard against Stockfish under python-chess"
        game.headers["Site"] = "tests/uci/match_stockfish.py"
        game.headers["Round"] = str(number + 1)
        game.headers["White"] = "mavboard" if mav_white else "Stockfish (depth 1)"
        game.headers["Black"] = "Stockfish (depth 1)" if mav_white else "mavboard"
        node = game
        while not board.is_game_over() and board.ply() < args.plies:
            mav_to_move = (board.turn == chess.WHITE) == mav_white
            if mav_to_move:
                # MultiPV 2 analysis of the position first (python-chess manages MultiPV itself), then the move.
                for rank, info in enumerate(
                    mavboard.analyse(board, chess.engine.Limit(nodes=args.nodes), multipv=2, game=number), start=1
                ):
                    check_line(board, info, rank)
                result = mavboard.play(
                    board, chess.engine.Limit(nodes=args.nodes), info=chess.engine.INFO_ALL, game=number
                )
                if result.move is None or result.move not in board.legal_moves:
                    fail(f"game {number + 1}: mavboard played {result.move} in {board.fen()}")
                if "score" not in result.info or "wdl" not in result.info:
                    fail(f"game {number + 1}: no score or wdl with the move: {result.info}")
                wdl = result.info["wdl"].relative
                comment = f"{result.info['score'].relative} wdl {wdl.wins}/{wdl.draws}/{wdl.losses}"
            else:
                result = stockfish.play(board, chess.engine.Limit(depth=1), game=number)
                comment = ""
            board.push(result.move)
            node = node.add_variation(result.move, comment=comment)
        outcome = board.outcome()
        game.headers["Result"] = outcome.result() if outcome else "*"
        if not outcome:
            game.headers["Termination"] = f"stopped after {args.plies} plies"
        games.append(game)
        print(f"game {number + 1}: {board.ply()} plies, {game.headers['Result']}")
    return games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mavboard")
    parser.add_argument("stockfish")
    parser.add_argument("out_pgn")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--plies", type=int, default=40)
    parser.add_argument("--nodes", type=int, default=64)
    args = parser.parse_args()
    mavboard = chess.engine.SimpleEngine.popen_uci([args.mavboard, "uci"], timeout=60)
    stockfish = chess.engine.SimpleEngine.popen_uci(args.stockfish, timeout=60)
    try:
        if "MultiPV" not in mavboard.options or "UCI_ShowWDL" not in mavboard.options:
            fail(f"mavboard's options lack MultiPV or UCI_ShowWDL: {sorted(mavboard.options)}")
        mavboard.configure({"UCI_ShowWDL": True})
        stockfish.configure({"Threads": 1})
        analyse(mavboard, args.nodes)
        games = play(mavboard, stockfish, args)
    finally:
        mavboard.quit()
        stockfish.quit()
    with open(args.out_pgn, "w", encoding="utf-8") as out:
        for game in games:
            print(game, file=out, end="\n\n")
    print(f"wrote {len(games)} games to {args.out_pgn}")


if __name__ == "__main__":
    main()
