import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Store } from '../../store/repos/index.ts';
import type { DomainEvents } from '../events.ts';
import type { SecretBox } from '../publishing/secrets.ts';
import { CredentialService } from './credentials.ts';
import { AccessService } from './service.ts';

/** The access area's services, built once per server (`Services.access`). */
export interface AccessArea {
  grants: AccessService;
  credentials: CredentialService;
}

export interface AccessAreaDeps {
  store: Store;
  clock: Clock;
  events: DomainEvents;
  config: Config;
  box: SecretBox;
}

export function createAccessArea(deps: AccessAreaDeps): AccessArea {
  const grants = new AccessService({
    store: deps.store,
    clock: deps.clock,
    events: deps.events,
    baseDomain: deps.config.baseDomain,
  });
  return { grants, credentials: new CredentialService(grants, deps.box) };
}
