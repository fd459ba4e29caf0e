/** Where a failing subscriber is reported: the logger's `warn` (util sits below the logger). */
export interface ListenerLog {
  warn(msg: string, fields?: Record<string, unknown>, err?: unknown): void;
}

/**
 * Subscribers of a stream of events (audit entries, alert notifications). A failing
 * subscriber is logged and never stops the others or the caller.
 */
export class Listeners<T> {
  private readonly set = new Set<(event: T) => void>();

  constructor(
    private readonly log: ListenerLog,
    private readonly what: string,
  ) {}

  subscribe(listener: (event: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  #relay: ((event: T) => void) | undefined;

  /** Also hands each event emitted here to `relay` (the other instances sharing the store). */
  relayTo(relay: (event: T) => void): void {
    this.#relay = relay;
  }

  /** An event of this instance: to the subscribers here, and to the relay. */
  emit(event: T): void {
    this.deliver(event);
    if (!this.#relay) return;
    try {
      this.#relay(event);
    } catch (e) {
      this.log.warn(`${this.what} relay failed`, {}, e);
    }
  }

  /** An event of another instance (through the relay there): to the subscribers here only. */
  deliver(event: T): void {
    for (const l of this.set) {
      try {
        l(event);
      } catch (e) {
        this.log.warn(`${this.what} listener failed`, {}, e);
      }
    }
  }
}
