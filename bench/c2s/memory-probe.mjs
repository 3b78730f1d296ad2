// Preloaded into the server process by bench/c2s/run.ts (`node --expose-gc --import <this file>
// cli/dist/servicectl.js … foreground`), started with an IPC channel. It answers one question over that
// channel: the process's memory after a full garbage collection. It changes nothing else in the server,
// and does not keep it alive (the channel is unreferenced).
if (process.send) {
  process.on('message', (message) => {
    if (!message || message.type !== 'memory') return;
    // Twice: the first collection may leave weakly held and finalizable objects for the second.
    globalThis.gc?.();
    globalThis.gc?.();
    const usage = process.memoryUsage();
    process.send({ type: 'memory', id: message.id, gc: typeof globalThis.gc === 'function', ...usage });
  });
  process.channel?.unref();
}
