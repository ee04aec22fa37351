set -x
nvidia-smi; nvidia-smi -q -d CLOCK | head -60
nvcc --version; ncu --version; ldd --version | head -1; cat /etc/os-release | head -3
cat /proc/driver/nvidia/version
ls /usr/local/ | head; ls /usr/local/cuda/lib64 | grep -E "nvrtc|cublas|cudnn" | head -30
ldconfig -p | grep -E "nvrtc|cublas|cudnn|libcuda|nvidia-ml" | head -20
echo LD=$LD_LIBRARY_PATH
python3 - <<'PY'
import torch, time
print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_device_name())
p=torch.cuda.get_device_properties(0); print(p)
def t(f, n=20):
    f(); torch.cuda.synchronize()
    s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True)
    ts=[]
    for _ in range(n):
        s.record(); f(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e)/1e3)
    ts.sort(); return ts[len(ts)//2]
a=torch.empty(1<<30, dtype=torch.uint8, device='cuda'); b=torch.empty_like(a)
tt=t(lambda: b.copy_(a)); print("d2d copy 1GiB: %.3f TB/s (r+w)"%(2*(1<<30)/tt/1e12))
for dt in [torch.float64, torch.float32, torch.float16, torch.bfloat16]:
    n=8192
    x=torch.randn(n,n,device='cuda',dtype=dt); y=torch.randn(n,n,device='cuda',dtype=dt)
    torch.backends.cuda.matmul.allow_tf32=False
    tt=t(lambda: x@y, 10); print(dt, "%.1f TFLOP/s"%(2*n**3/tt/1e12))
    if dt==torch.float32:
        torch.backends.cuda.matmul.allow_tf32=True
        tt=t(lambda: x@y, 10); print("tf32 %.1f TFLOP/s"%(2*n**3/tt/1e12))
try:
    n=8192
    x=torch.randn(n,n,device='cuda').to(torch.float8_e4m3fn); y=torch.randn(n,n,device='cuda').to(torch.float8_e4m3fn).t()
    one=torch.tensor(1.0,device='cuda')
    tt=t(lambda: torch._scaled_mm(x,y,scale_a=one,scale_b=one,out_dtype=torch.bfloat16),10); print("fp8 %.1f TFLOP/s"%(2*n**3/tt/1e12))
except Exception as ex: print("fp8 fail", ex)
try:
    x=torch.randint(-8,8,(n,n),device='cuda',dtype=torch.int8); y=torch.randint(-8,8,(n,n),device='cuda',dtype=torch.int8).t()
    tt=t(lambda: torch._int_mm(x,y),10); print("int8 %.1f TOP/s"%(2*n**3/tt/1e12))
except Exception as ex: print("int8 fail", ex)
PY
nvidia-smi -q -d CLOCK | grep -A4 "Max Clocks"
