/** Access log lines and their rollups (see migration 0023). Bigint columns read as strings on PostgreSQL. */
export interface AccessLogTables {
  access_log: {
    id: string;
    space_id: string;
    version_id: string | null;
    at: string;
    host: string;
    method: string;
    path: string;
    status: number;
    bytes: number | string;
    duration_ms: number;
    referrer: string | null;
    user_agent: string | null;
    country: string | null;
    request_id: string | null;
    /** Daily-salted hash of IP + user agent (the salt is dropped after its day). */
    visitor: string;
  };
  access_hourly: {
    space_id: string;
    /** `YYYY-MM-DDTHH` (UTC). */
    hour: string;
    requests: number | string;
    bytes: number | string;
    s2xx: number | string;
    s3xx: number | string;
    s4xx: number | string;
    s5xx: number | string;
  };
  access_visitors: { space_id: string /** `YYYY-MM-DD` */; day: string; visitor: string };
  /** Distinct visitors per space and day (migration 0026), added to by each flush. */
  access_daily: { space_id: string; day: string; visitors: number | string };
  access_top: {
    space_id: string;
    day: string;
    /** `path`, `referrer` or `country`. */
    kind: string;
    key: string;
    requests: number | string;
  };
}
