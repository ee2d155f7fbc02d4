/** Time comes from here so tests can move it (expiry, lifetimes) without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * The clock's time in milliseconds. The system clock answers without making a Date (the edge asks on
 * every request: a Date is ~100 bytes of garbage each time).
 */
export function nowMs(clock: Clock): number {
  return clock === systemClock ? Date.now() : clock.now().getTime();
}

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  private t: number;
  constructor(start: Date | number = Date.now()) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(at: Date | number): void {
    this.t = typeof at === 'number' ? at : at.getTime();
  }
}

export function iso(d: Date): string {
  return d.toISOString();
}
