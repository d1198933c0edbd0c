import re,sys,os
# Lists functions longer than N lines (crude brace counting; good enough to find candidates).
# Usage: python3 docs/fnlen.py 60 crates/fetch crates/audit ...
# crude: find 'fn name' lines, then count lines until brace balance returns to zero
def scan(path):
    lines=open(path,encoding='utf-8').read().split('\n')
    out=[]
    i=0
    while i<len(lines):
        l=lines[i]
        m=re.match(r'\s*(pub(\([a-z]+\))?\s+)?(async\s+)?(const\s+)?fn\s+([a-zA-Z0-9_]+)',l)
        if m and not l.strip().startswith('//'):
            depth=0;started=False;j=i
            while j<len(lines):
                s=re.sub(r'"(\\.|[^"\\])*"','""',lines[j])
                s=re.sub(r"'(\\.|[^'\\])'","''",s)
                s=s.split('//')[0]
                for c in s:
                    if c=='{': depth+=1;started=True
                    elif c=='}': depth-=1
                if started and depth==0: break
                if not started and s.rstrip().endswith(';'): break
                j+=1
            n=j-i+1
            if n>int(sys.argv[1]): out.append((n,path,i+1,m.group(5)))
        i+=1
    return out
res=[]
for root in sys.argv[2:]:
    for d,_,fs in os.walk(root):
        for f in fs:
            if f.endswith('.rs'): res+=scan(os.path.join(d,f))
for r in sorted(res,reverse=True): print(*r)
