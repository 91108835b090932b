"""A UCI tournament as GUIs run one: mavboard against Stockfish on real clocks, driven by python-chess.

    tournament.py MAVBOARD STOCKFISH OUT_PGN [--games N] [--clock S+INC ...] [--skill N] [--max-plies N]
                  [--late-ms MS] [--max-late N] [--seed N] [--hang-s S]

Games alternate colours and cycle through the clocks given (default: 10+0.1 and 1+0.01). Each side's clock
is kept here, as a GUI keeps it: the time from sending `go` to reading `bestmove` is taken off the mover's
clock, then its increment is added; a clock below zero loses on time. Every `go` carries `wtime btime winc
binc` (python-chess's `Limit(white_clock=...)`). Game by game the driver varies what a GUI varies:

- even games: `MultiPV 3` and `UCI_ShowWDL` on (every line checked: legal PV, a score, W/D/L adding to 1000);
  odd games: plain `play` with pondering on (python-chess sends `go ponder` on the expected reply after each
  `bestmove ... ponder ...` and `stop` when the next move comes);
- in every game, about one move in five of mavboard's is an analysis ended by `stop` at a random moment
  within its share of the clock; the time from `stop` to `bestmove` is measured;
- `ucinewgame` between games (python-chess sends it when the game changes).

Counted, for mavboard: protocol errors (python-chess's warnings and errors about what the engine printed on
stdout, and any `EngineError`), illegal moves, crashes (the process ended), hangs (a move not answered within
the clock plus --hang-s: mavboard is killed, the last lines exchanged are written beside OUT_PGN, the game is
lost and the match goes on with a new process), time forfeits, and late answers (a
`bestmove` more than --late-ms past the time left on the clock, or past the `stop`). The mean share of the
time left that a move used is reported, and so are the error lines of mavboard's own log (stderr), which
the GUI does not see. A game longer than --max-plies is adjudicated a draw.

Prints one line per game and a summary table; exits with 1 when any count is over its limit (all 0, but
--max-late for late answers), and writes the games to OUT_PGN.
"""

import argparse
import collections
import logging
import random
import sys
import threading
import time

import chess
import chess.engine
import chess.pgn


class Counter(logging.Handler):
    """Counts python-chess's warnings and errors about what the engines printed on stdout (what it could
    not understand: protocol errors); lines an engine wrote on stderr, which python-chess logs too, are kept
    apart (they are the engine's own log, not the protocol)."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages = []
        self.stderr = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        (self.stderr if "stderr >>" in message else self.messages).append(message)


# What mavboard says when it plays a move without any evaluation (its time ran out before the model's
# first answer): a legal move, but no score and no lines.
FALLBACK = "the search has no move"


class Recent(logging.Handler):
    """Keeps the last lines python-chess logged (every line sent to and read from the engines), to show
    what was said before a hang, and counts mavboard's moves played without an evaluation."""

    def __init__(self, size: int = 400) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines = collections.deque(maxlen=size)
        self.fallbacks = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if ">> info string" in message and FALLBACK in message:
            self.fallbacks += 1
        self.lines.append(f"{record.created:.3f} {message}")


class Watchdog:
    """Kills mavboard when a move of its takes longer than its clock and a margin: a hang (an owed
    `bestmove` that never comes) then ends that game as a loss, is counted, and the match goes on with a
    fresh process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.deadline = None
        self.engine = None
        self.fired = False
        threading.Thread(target=self._run, daemon=True).start()

    def arm(self, engine, seconds: float) -> None:
        with self.lock:
            self.engine, self.deadline, self.fired = engine, time.monotonic() + seconds, False

    def disarm(self) -> None:
        with self.lock:
            self.deadline = None

    def _run(self) -> None:
        while True:
            time.sleep(0.2)
            with self.lock:
                if self.deadline is not None and time.monotonic() > self.deadline:
                    self.deadline, self.fired = None, True
                    try:
                        self.engine.protocol.loop.call_soon_threadsafe(self.engine.transport.kill)
                    except Exception as e:  # the process may be gone already
                        print(f"  watchdog: {e}", file=sys.stderr)


class Tally:
    """What went wrong, for mavboard, over the whole match."""

    def __init__(self) -> None:
        self.protocol_errors = 0
        self.illegal_moves = 0
        self.crashes = 0
        self.hangs = 0
        self.forfeits = 0
        self.late = 0
        self.worst_late_ms = 0.0
        self.stops = 0
        self.worst_stop_ms = 0.0
        self.moves = 0
        self.shares = []
        self.score = [0, 0, 0]  # mavboard's wins, draws, losses

    def late_by(self, ms: float, limit_ms: float) -> None:
        """Records how far past its limit an answer came."""
        self.worst_late_ms = max(self.worst_late_ms, ms)
        if ms > limit_ms:
            self.late += 1


def parse_clock(text: str):
    """`10+0.1` -> (10.0, 0.1) seconds."""
    base, _, inc = text.partition("+")
    return float(base), float(inc or 0)


def check_lines(board: chess.Board, infos: list, tally: Tally, where: str) -> None:
    """Checks MultiPV lines as python-chess parsed them; a bad one counts as a protocol error. A move played
    without an evaluation has no lines to check (it is counted apart, as a fallback)."""
    if infos and FALLBACK in infos[0].get("string", ""):
        return
    for rank, info in enumerate(infos, start=1):
        pv = info.get("pv") or []
        probe = board.copy()
        ok = info.get("multipv", rank) == rank and "score" in info
        for move in pv:
            if move not in probe.legal_moves:
                ok = False
                break
            probe.push(move)
        wdl = info.get("wdl")
        if wdl is None or sum(wdl.relative) != 1000:
            ok = False
        if not ok:
            tally.protocol_errors += 1
            print(f"  bad line {rank} at {where}: {info}", file=sys.stderr)


def limit_for(board: chess.Board, clocks: dict, inc: float) -> chess.engine.Limit:
    """The clock limit a GUI sends: both sides' time left and increments."""
    return chess.engine.Limit(
        white_clock=max(clocks[chess.WHITE], 0.0),
        black_clock=max(clocks[chess.BLACK], 0.0),
        white_inc=inc,
        black_inc=inc,
    )


def mavboard_move(engine, board, clocks, inc, game_no, multipv, ponder, rng, tally, args):
    """One move of mavboard's; returns (move or None, seconds used, comment)."""
    limit = limit_for(board, clocks, inc)
    left = clocks[board.turn]
    where = f"game {game_no + 1} ply {board.ply()}"
    started = time.monotonic()
    comment = ""
    if rng.random() < 0.2:
        # An analysis that the GUI stops at a random moment within the move's share of the clock.
        share = left / 30 + inc
        with engine.analysis(board, limit, game=game_no) as analysis:
            time.sleep(rng.uniform(0.0, share))
            stop_at = time.monotonic()
            analysis.stop()
            best = analysis.wait()
        stop_ms = (time.monotonic() - stop_at) * 1000
        tally.stops += 1
        tally.worst_stop_ms = max(tally.worst_stop_ms, stop_ms)
        tally.late_by(stop_ms, args.late_ms)
        move = best.move
        comment = f"stopped after {(stop_at - started) * 1000:.0f} ms"
    elif multipv:
        with engine.analysis(board, limit, multipv=3, game=game_no) as analysis:
            best = analysis.wait()
            infos = [dict(i) for i in analysis.multipv]
        check_lines(board, infos[: min(3, board.legal_moves.count())], tally, where)
        move = best.move
    else:
        # A copy: python-chess keeps the board given to a pondering `play` to recognise a ponderhit, so a board
        # changed in place afterwards looks like the pondered position to a following `analysis`, which then
        # ends the ponder search without `stop` and leaves a stray `ponderhit` for the next `play`: a hang,
        # which Stockfish 15.1 shows too (it stops reading at a `go` during a ponder search). GUIs keep a
        # position per request.
        result = engine.play(board.copy(), limit, game=game_no, ponder=ponder, info=chess.engine.INFO_SCORE)
        move = result.move
        if "score" in result.info:
            comment = str(result.info["score"].relative)
    used = time.monotonic() - started
    tally.late_by((used - left) * 1000, args.late_ms)
    tally.shares.append(used / left if left > 0 else 1.0)
    tally.moves += 1
    return move, used, comment


def write_recent(args, tag: str, what: str, board: chess.Board) -> str:
    """Writes the last lines exchanged with the engines beside the PGN; returns the file's name."""
    path = f"{args.out_pgn}.{tag}.log"
    with open(path, "w", encoding="utf-8") as out:
        print(f"{what}, ply {board.ply()} ({board.fen()}); the last lines exchanged:", file=out)
        for line in args.recent.lines:
            print(line, file=out)
    return path


def play_game(mav, fish, game_no, clock, args, rng, tally):
    """Plays one game; returns the PGN game."""
    base, inc = clock
    board = chess.Board()
    mav_white = game_no % 2 == 0
    multipv = game_no % 4 in (0, 3)
    ponder = not multipv
    game = chess.pgn.Game()
    game.headers["Event"] = f"mavboard against Stockfish, {base:g}+{inc:g}"
    game.headers["Site"] = "tests/uci/tournament.py"
    game.headers["Round"] = str(game_no + 1)
    game.headers["White"] = "mavboard" if mav_white else f"Stockfish (skill {args.skill})"
    game.headers["Black"] = f"Stockfish (skill {args.skill})" if mav_white else "mavboard"
    game.headers["TimeControl"] = f"{base:g}+{inc:g}"
    mav.configure({"UCI_ShowWDL": multipv})
    clocks = {chess.WHITE: base, chess.BLACK: base}
    node = game
    result, termination = None, None
    while result is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result = outcome.result()
            break
        if board.ply() >= args.max_plies:
            result, termination = "1/2-1/2", f"adjudicated a draw after {args.max_plies} plies"
            break
        mav_to_move = (board.turn == chess.WHITE) == mav_white
        mover = board.turn
        if mav_to_move:
            args.watchdog.arm(mav, clocks[mover] + args.hang_s)
            try:
                move, used, comment = mavboard_move(mav, board, clocks, inc, game_no, multipv, ponder, rng, tally, args)
            except chess.engine.EngineTerminatedError as e:
                if not args.watchdog.fired:
                    tally.crashes += 1
                    raise SystemExit(f"FAILED: mavboard ended at game {game_no + 1} ply {board.ply()}: {e}")
                tally.hangs += 1
                dump = write_recent(args, f"hang-{tally.hangs}", f"no bestmove at game {game_no + 1}", board)
                print(f"  hang at game {game_no + 1} ply {board.ply()}: mavboard killed after "
                      f"{clocks[mover] + args.hang_s:.1f} s, log in {dump}")
                result, termination = ("0-1" if mav_white else "1-0"), "mavboard hung (no bestmove)"
                args.restart = True
                break
            except chess.engine.EngineError as e:
                # python-chess raises this for an illegal bestmove, among other protocol errors.
                text = str(e)
                if "illegal" in text:
                    tally.illegal_moves += 1
                else:
                    tally.protocol_errors += 1
                result, termination = ("0-1" if mav_white else "1-0"), f"mavboard: {text}"
                break
            finally:
                args.watchdog.disarm()
        else:
            started = time.monotonic()
            move = fish.play(board, limit_for(board, clocks, inc), game=game_no).move
            used, comment = time.monotonic() - started, ""
        if move is None or move not in board.legal_moves:
            if mav_to_move:
                tally.illegal_moves += 1
                dump = write_recent(args, f"illegal-{tally.illegal_moves}", f"{move} at game {game_no + 1}", board)
                print(f"  illegal move {move} at game {game_no + 1} ply {board.ply()}, log in {dump}")
            result, termination = ("0-1" if mover == chess.WHITE else "1-0"), f"illegal move {move}"
            break
        clocks[mover] -= used
        if clocks[mover] < 0:
            if mav_to_move:
                tally.forfeits += 1
            result, termination = ("0-1" if mover == chess.WHITE else "1-0"), "time forfeit"
            break
        clocks[mover] += inc
        board.push(move)
        node = node.add_variation(move, comment=comment)
        node.set_clock(clocks[mover])
    game.headers["Result"] = result
    if termination:
        game.headers["Termination"] = termination
    points = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
    mav_points = points if mav_white else 1.0 - points
    tally.score[0 if mav_points == 1.0 else 1 if mav_points == 0.5 else 2] += 1
    modes = "MultiPV 3 + WDL" if multipv else "ponder"
    print(f"game {game_no + 1} ({base:g}+{inc:g}, {modes}): {board.ply()} plies, {result}"
          + (f" ({termination})" if termination else ""))
    return game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mavboard")
    parser.add_argument("stockfish")
    parser.add_argument("out_pgn")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--clock", action="append", help="S+INC in seconds (repeat; games cycle through them)")
    parser.add_argument("--skill", type=int, default=0, help="Stockfish's Skill Level")
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--late-ms", type=float, default=50.0)
    parser.add_argument("--max-late", type=int, default=0, help="late answers allowed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hang-s", type=float, default=10.0,
                        help="a move of mavboard's not answered within its clock plus this is a hang")
    args = parser.parse_args()
    clocks = [parse_clock(c) for c in (args.clock or ["10+0.1", "1+0.01"])]
    rng = random.Random(args.seed)
    counter = Counter()
    logging.getLogger("chess.engine").addHandler(counter)
    args.recent = Recent()
    logging.getLogger("chess.engine").addHandler(args.recent)
    logging.getLogger("chess.engine").setLevel(logging.DEBUG)
    args.watchdog = Watchdog()
    args.restart = False
    tally = Tally()
    mav = chess.engine.SimpleEngine.popen_uci([args.mavboard, "uci"], timeout=60)
    fish = chess.engine.SimpleEngine.popen_uci(args.stockfish, timeout=60)
    games = []
    try:
        fish.configure({"Threads": 1, "Skill Level": args.skill})
        for game_no in range(args.games):
            clock = clocks[(game_no // 2) % len(clocks)]
            games.append(play_game(mav, fish, game_no, clock, args, rng, tally))
            if args.restart:
                args.restart = False
                try:
                    mav.close()
                except Exception:
                    pass
                mav = chess.engine.SimpleEngine.popen_uci([args.mavboard, "uci"], timeout=60)
    finally:
        try:
            mav.quit()
        except chess.engine.EngineError:
            tally.crashes += 1
        fish.quit()
    tally.protocol_errors += len(counter.messages)
    for message in counter.messages:
        print(f"  python-chess: {message}", file=sys.stderr)
    errors_logged = [m for m in counter.stderr if " ERROR " in m or "panicked" in m]
    for message in errors_logged:
        print(f"  logged: {message}", file=sys.stderr)
    with open(args.out_pgn, "w", encoding="utf-8") as out:
        for game in games:
            print(game, file=out, end="\n\n")
    share = sum(tally.shares) / len(tally.shares) if tally.shares else 0.0
    w, d, l = tally.score
    rows = [
        ("games", len(games)),
        ("mavboard W/D/L", f"{w}/{d}/{l}"),
        ("mavboard moves", tally.moves),
        ("protocol errors", tally.protocol_errors),
        ("moves played without an evaluation (no model answer within the time)", args.recent.fallbacks),
        ("errors in mavboard's log (stderr)", len(errors_logged)),
        ("illegal moves", tally.illegal_moves),
        ("crashes", tally.crashes),
        (f"hangs (no bestmove within the clock + {args.hang_s:g} s)", tally.hangs),
        ("time forfeits", tally.forfeits),
        (f"late answers (> {args.late_ms:g} ms)", tally.late),
        ("worst lateness, ms", f"{tally.worst_late_ms:.1f}"),
        ("stops sent", tally.stops),
        ("worst stop -> bestmove, ms", f"{tally.worst_stop_ms:.1f}"),
        ("mean share of the time left used per move", f"{share:.3f}"),
    ]
    for name, value in rows:
        print(f"| {name} | {value} |")
    failed = tally.protocol_errors + tally.illegal_moves + tally.crashes + tally.hangs + tally.forfeits
    if failed or tally.late > args.max_late:
        print("FAILED: see the counts above", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
