import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import { RateLimiter } from './rate-limit.ts';

/** The rate limits of the API and the site edge, one limiter per kind of attempt. */
export function createRateLimits(clock: Clock, config: Config): Services['rateLimits'] {
  return {
    signIn: new RateLimiter(clock, 10, 60_000),
    signup: new RateLimiter(clock, 5, 3600_000),
    anonymousPublish: new RateLimiter(
      clock,
      config.anonymous.publishesPerHourPerIp,
      3600_000,
      'anonymous_publish_rate_limited',
    ),
    oauthToken: new RateLimiter(clock, 60, 60_000),
    oauthDevice: new RateLimiter(clock, 20, 60_000),
    deviceVerify: new RateLimiter(clock, 10, 60_000, 'device_verification_rate_limited'),
    sitePasswordIp: new RateLimiter(clock, 10, 15 * 60_000, 'password_rate_limited'),
    sitePasswordCredential: new RateLimiter(clock, 100, 15 * 60_000, 'password_rate_limited'),
    accessRequestIp: new RateLimiter(clock, 10, 3600_000),
    accessRequestAddress: new RateLimiter(clock, 3, 3600_000),
  };
}
