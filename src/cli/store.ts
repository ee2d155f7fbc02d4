import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One server and the credential for it. */
export interface Profile {
  apiUrl: string;
  token?: string;
  /** `api_key` (given with --token) or `oauth` (`spaces login`; revoked on logout). */
  tokenKind?: 'api_key' | 'oauth';
  refreshToken?: string;
  /** When the OAuth access token expires (ISO 8601); it is renewed with `refreshToken` from then. */
  expiresAt?: string;
  team?: string;
  user?: string;
}

export interface CliConfig {
  currentProfile?: string;
  profiles: Record<string, Profile>;
}

/** `.spaces/state.json`: links a project directory to its space. */
export interface ProjectState {
  apiUrl: string;
  spaceId: string;
  slug: string;
  liveUrl: string;
  teamId?: string | null;
  /** The space key of an anonymous publish (until it is claimed). */
  spaceKey?: string;
  claimUrl?: string;
  /** The publisher's door (`/__/<space key>`): the site as it is, before it is claimed. */
  openUrl?: string;
  expiresAt?: string | null;
}

export const DEFAULT_API_URL = 'http://localhost:8080';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SPACES_CONFIG_DIR) return env.SPACES_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'spaces');
}

/** Writes via a temp file and rename, created 0600 so a credential is never readable by others. */
function writePrivate(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`${file} is not valid JSON; fix or delete it.`);
  }
}

export class ConfigStore {
  readonly file: string;
  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.file = path.join(configDir(env), 'config.json');
  }
  read(): CliConfig {
    const c = readJson<CliConfig>(this.file);
    return { currentProfile: c?.currentProfile, profiles: c?.profiles ?? {} };
  }
  write(c: CliConfig): void {
    writePrivate(this.file, c);
  }
  update(fn: (c: CliConfig) => void): CliConfig {
    const c = this.read();
    fn(c);
    this.write(c);
    return c;
  }
}

export class StateStore {
  readonly file: string;
  constructor(readonly projectDir: string) {
    this.file = path.join(projectDir, '.spaces', 'state.json');
  }
  read(): ProjectState | null {
    return readJson<ProjectState>(this.file);
  }
  write(s: ProjectState): void {
    writePrivate(this.file, s);
    const gi = path.join(this.projectDir, '.spaces', '.gitignore');
    if (!fs.existsSync(gi)) fs.writeFileSync(gi, '*\n');
  }
  clear(): void {
    fs.rmSync(this.file, { force: true });
  }
}
