import { StartupError } from './config.ts';
import type { SecretBox } from './domain/publishing/secrets.ts';
import type { Store } from './store/repos/index.ts';

/**
 * Every instance on one database must seal secret variables with one key. The first start records
 * the key's fingerprint; a start with another key (an instance that generated its own
 * `secret.key`, or a changed `SPACES_SECRET_KEY`) is refused before it seals anything the others
 * cannot open.
 */
export async function checkSharedKey(store: Store, box: SecretBox): Promise<void> {
  const mine = box.fingerprint();
  const recorded = await store.repos.meta.valueOrSet('secret_key_fingerprint', mine);
  if (recorded === mine) return;
  throw new StartupError(
    `the secret key (${box.source}) is not the one this database's secret variables were sealed with. ` +
      'Several instances on one database: set SPACES_SECRET_KEY to the same value on every one of them. ' +
      'One instance whose data directory moved: copy the old secret.key into it, or set the old SPACES_SECRET_KEY.',
  );
}
