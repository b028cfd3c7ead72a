"""The embedded simulated DRA cluster: drawb's offline default and the Binder demo."""
