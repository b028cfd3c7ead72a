"""Local GPUs: NVML discovery and nvidia-smi output (parse and produce)."""
