#!/usr/bin/env python3
# lab/ncu_src_sum.py CSV [N] — summary of an ncu source-page CSV (mmatune.sh NCU_SRC: $OUT/mmatune_src.csv):
# warp-stall samples by reason, by opcode, and the N instructions with the most samples.
import csv,sys,collections,re
rows=[];hdr=None
for r in csv.reader(open(sys.argv[1])):
    if len(r)>5 and r[0]=='Address': hdr=r; continue
    if hdr and len(r)==len(hdr): rows.append(dict(zip(hdr,r)))
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
stalls=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
tot=sum(num(r['Warp Stall Sampling (All Samples)']) for r in rows)
print('total samples',tot)
agg=collections.Counter()
for r in rows:
    for s in stalls: agg[s]+=num(r[s])
print(' '.join(f"{k[6:]}={v/tot*100:.1f}%" for k,v in agg.most_common(12)))
byop=collections.Counter(); byopst=collections.defaultdict(collections.Counter)
for r in rows:
    op=r['Source'].split()[0] if r['Source'].split() else '?'
    if op.startswith('@'): op=r['Source'].split()[1]
    op=op.split('.')[0]
    n=num(r['Warp Stall Sampling (All Samples)']); byop[op]+=n
    for s in stalls: byopst[op][s]+=num(r[s])
for op,n in byop.most_common(12):
    top=', '.join(f"{k[6:]} {v/tot*100:.1f}" for k,v in byopst[op].most_common(3))
    print(f"{op:10s} {n/tot*100:5.1f}%  ({top})")
print('top instructions:')
for r in sorted(rows,key=lambda r:-num(r['Warp Stall Sampling (All Samples)']))[:int(sys.argv[2]) if len(sys.argv)>2 else 25]:
    n=num(r['Warp Stall Sampling (All Samples)'])
    st=sorted(((num(r[s]),s[6:]) for s in stalls),reverse=True)[:3]
    print(f"{r['Address']:>6} {n/tot*100:5.2f}% {r['Source'][:60]:60s} "+' '.join(f"{b}={a/tot*100:.1f}" for a,b in st if a>0))
