/**
 * Progress of a long command on a terminal: a spinner once a call has taken about a second, a bar when the
 * server reports how far it is. Drawn on stderr, so stdout carries only the result; nothing at all when
 * stderr is not a terminal.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const DELAY_MS = 1000;
const BAR_WIDTH = 30;

export class Progress {
  #timer?: NodeJS.Timeout;
  #frame = 0;
  #started = Date.now();
  #shown = false;
  #state: { done: number; total?: number; label?: string } | undefined;

  constructor(
    private readonly command: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    if (!stream.isTTY) return;
    this.#timer = setTimeout(() => {
      this.#shown = true;
      this.#timer = setInterval(() => this.#draw(), 100);
      this.#draw();
    }, DELAY_MS);
  }

  update(done: number, total?: number, label?: string): void {
    this.#state = { done, total, label };
  }

  /** Clears the line; call before printing the result. */
  stop(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    if (this.#shown) this.stream.write('\r\x1b[2K');
    this.#shown = false;
  }

  #draw(): void {
    const seconds = Math.round((Date.now() - this.#started) / 1000);
    const state = this.#state;
    let text: string;
    if (state?.total) {
      const ratio = Math.min(1, state.done / state.total);
      const filled = Math.round(ratio * BAR_WIDTH);
      text = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.round(ratio * 100)}% ${state.done}/${state.total}`;
    } else {
      text = `${FRAMES[this.#frame++ % FRAMES.length]} ${this.command}${state ? ` ${state.done}` : ''}`;
    }
    const label = state?.label ? ` ${state.label}` : '';
    const columns = this.stream.columns || 80; // a pseudo-terminal without a size says 0
    this.stream.write(`\r\x1b[2K${`${text}${label} ${seconds}s`.slice(0, columns - 1)}`);
  }
}
