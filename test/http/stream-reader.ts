/** Reads an event stream answer as it arrives, with deadlines instead of sleeps. */
export class StreamReader {
  text = "";
  done = false;
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();
  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }
  /** Reads until `check` holds on the text or the stream ends; false past the deadline. */
  async until(check: (text: string) => boolean, ms = 5_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!check(this.text) && !this.done) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const next = await Promise.race([
        this.reader.read(),
        new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), left))),
      ]);
      clearTimeout(timer);
      if (next === "timeout") return false;
      if (next.done) this.done = true;
      else this.text += this.decoder.decode(next.value, { stream: true });
    }
    return check(this.text) || this.done;
  }
  /** Reads to the end of the stream; true when it ended within `ms`. */
  async end(ms = 5_000): Promise<boolean> {
    await this.until(() => false, ms);
    return this.done;
  }
  lines(): string[] {
    return this.text.split("\n").filter((l) => l !== "");
  }
  cancel(): void {
    void this.reader.cancel().catch(() => {});
  }
}
