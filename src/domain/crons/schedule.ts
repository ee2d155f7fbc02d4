/**
 * Cron schedules (behaviour §4.8), all in UTC: the named ones, the `Nh`/`Nd`/`Nw` intervals and
 * five-field crontab lines (numbers, lists, ranges, steps; no macros or names). The settings file's
 * schema has already checked the form and the field ranges (settings-file.ts); this turns a stored
 * schedule into its next run time.
 *
 * - `hourly` → minute 0 of every hour; `daily` → 00:00; `twicedaily` → 00:00 and 12:00; `weekly` →
 *   Sunday 00:00 (as crontab's `@weekly`).
 * - `Nh` (1–12) → every N hours on the hour, counted from midnight (`0 *\/N * * *`: `6h` is 00, 06,
 *   12, 18). `Nd` (1–23) → daily at N:00 (`daily` is the same at 00:00). `Nw` (1–6) → weekly at
 *   00:00 on weekday N, Monday = 1 (`weekly` is the same on Sunday, 0). The ranges are those of an
 *   hour of the day and a day of the week, which is what the forms name.
 * - crontab: the standard rule — when both day of month and day of week are restricted, either
 *   matching is enough; day of week 0 and 7 are Sunday.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** 1970-01-04 was the first Sunday. */
const FIRST_SUNDAY = 3 * DAY;

interface Crontab {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  dayRestricted: boolean;
  weekdayRestricted: boolean;
}

const RANGES: Array<[number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];

function field(text: string, [lo, hi]: [number, number]): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let from = lo;
    let to = hi;
    if (range !== '*') {
      const [a, b] = range.split('-').map(Number) as [number, number | undefined];
      from = a;
      // `5/15` means from 5 to the end in steps of 15, as in cron.
      to = b ?? (stepText === undefined ? a : hi);
    }
    if (!Number.isInteger(from) || !Number.isInteger(to) || !Number.isInteger(step) || step < 1)
      throw new Error(`bad cron field "${text}"`);
    for (let n = from; n <= to; n += step) if (n >= lo && n <= hi) out.add(n);
  }
  return out;
}

function parseCrontab(schedule: string): Crontab {
  const f = schedule.trim().split(/\s+/);
  if (f.length !== 5) throw new Error(`a crontab schedule has five fields: "${schedule}"`);
  const weekdays = field(f[4]!, RANGES[4]!);
  if (weekdays.has(7)) weekdays.add(0);
  return {
    minutes: field(f[0]!, RANGES[0]!),
    hours: field(f[1]!, RANGES[1]!),
    days: field(f[2]!, RANGES[2]!),
    months: field(f[3]!, RANGES[3]!),
    weekdays,
    dayRestricted: f[2] !== '*',
    weekdayRestricted: f[4] !== '*',
  };
}

function nextCrontab(c: Crontab, after: number): number {
  // The first whole minute after `after`.
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  const limit = after + 5 * 366 * DAY; // `0 0 29 2 1` can wait years; nothing valid waits longer
  while (t <= limit) {
    const d = new Date(t);
    if (!c.months.has(d.getUTCMonth() + 1)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      continue;
    }
    const dom = c.days.has(d.getUTCDate());
    const dow = c.weekdays.has(d.getUTCDay());
    const dayOk =
      c.dayRestricted && c.weekdayRestricted
        ? dom || dow
        : c.dayRestricted
          ? dom
          : c.weekdayRestricted
            ? dow
            : true;
    if (!dayOk) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
      continue;
    }
    if (!c.hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
      continue;
    }
    if (!c.minutes.has(d.getUTCMinutes())) {
      t += MINUTE;
      continue;
    }
    return t;
  }
  throw new Error('the schedule never runs');
}

/** The first multiple of `every` (offset by `origin`) strictly after `after`. */
const nextAligned = (after: number, every: number, origin = 0) =>
  origin + (Math.floor((after - origin) / every) + 1) * every;

/** When a schedule runs next, strictly after `after`. Throws on a schedule that is not valid. */
export function nextRun(schedule: string, after: Date): Date {
  const t = after.getTime();
  switch (schedule) {
    case 'hourly':
      return new Date(nextAligned(t, HOUR));
    case 'daily':
      return new Date(nextAligned(t, DAY));
    case 'twicedaily':
      return new Date(nextAligned(t, 12 * HOUR));
    case 'weekly':
      return new Date(nextAligned(t, WEEK, FIRST_SUNDAY));
  }
  const interval = /^([1-9]\d?)([hdw])$/.exec(schedule);
  if (interval) {
    const n = Number(interval[1]);
    const unit = interval[2];
    const max = unit === 'h' ? 12 : unit === 'd' ? 23 : 6;
    if (n > max) throw new Error(`"${schedule}": ${unit} forms are 1–${max}`);
    const line = unit === 'h' ? `0 */${n} * * *` : unit === 'd' ? `0 ${n} * * *` : `0 0 * * ${n}`;
    return new Date(nextCrontab(parseCrontab(line), t));
  }
  return new Date(nextCrontab(parseCrontab(schedule), t));
}
