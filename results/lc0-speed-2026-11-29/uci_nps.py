"""lc0 and mavboard as UCI engines on the same net: `go nodes N` from three positions, Threads T each,
the nodes of the last info line over the wall time from `go` to `bestmove` (after a 200-node warm-up).

usage: python3 uci_nps.py NODES THREADS MAVBOARD LC0 LC0_WEIGHTS MAVBOARD_PACKAGE
"""
import subprocess, sys, time, re
def run(cmd, opts, fen, nodes):
    p=subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    def send(l): p.stdin.write(l+"\n"); p.stdin.flush()
    def until(pref):
        lines=[]
        while True:
            l=p.stdout.readline()
            if not l: raise SystemExit("eof: "+"".join(lines[-5:]))
            lines.append(l)
            if l.startswith(pref): return lines
    send("uci"); until("uciok")
    for k,v in opts.items(): send(f"setoption name {k} value {v}")
    send("isready"); until("readyok")
    send(f"position fen {fen}"); send("isready"); until("readyok")
    # warm-up
    send("go nodes 200"); until("bestmove")
    send("ucinewgame"); send(f"position fen {fen}"); send("isready"); until("readyok")
    t=time.perf_counter(); send(f"go nodes {nodes}"); lines=until("bestmove"); dt=time.perf_counter()-t
    send("quit"); p.wait()
    infos=[l for l in lines if l.startswith("info") and " nodes " in l]
    last=infos[-1]
    n=int(re.search(r" nodes (\d+)",last).group(1)); nps=re.search(r" nps (\d+)",last)
    return n, dt, int(nps.group(1)) if nps else None
fens=["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3","r2q1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPP2PPP/R2Q1RK1 w - - 4 8","8/5pk1/6p1/3R4/5P2/6P1/r5K1/8 w - - 0 45"]
nodes=int(sys.argv[1]); threads=sys.argv[2]; mav=sys.argv[3]; lc0=sys.argv[4]; weights=sys.argv[5]; model=sys.argv[6]
tot={"mav":[0,0.0],"lc0":[0,0.0]}
for fen in fens:
    a=run([lc0,f"--weights={weights}","--backend=blas"],{"Threads":threads},fen,nodes)
    b=run([mav,"uci","--model",model],{"Threads":threads},fen,nodes)
    print(fen[:30], "lc0 nodes %d %.2fs nps %s | mavboard nodes %d %.2fs nps %s"%(a[0],a[1],a[2],b[0],b[1],b[2]))
    tot["lc0"][0]+=a[0]; tot["lc0"][1]+=a[1]; tot["mav"][0]+=b[0]; tot["mav"][1]+=b[1]
l=tot["lc0"][0]/tot["lc0"][1]; m=tot["mav"][0]/tot["mav"][1]
print("threads %s: lc0 %.0f nodes/s, mavboard %.0f nodes/s (wall, go to bestmove), mavboard/lc0 %.2f"%(threads,l,m,m/l))
