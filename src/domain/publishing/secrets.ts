import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * AES-256-GCM for secret variables. The key comes from `SPACES_SECRET_KEY` (hashed to 32 bytes) or,
 * when not configured, from `<dataDir>/secret.key`, created 0600 with 32 random bytes on first use.
 */
export class SecretBox {
  private key: Buffer | null = null;

  constructor(
    private readonly configured: string | null,
    private readonly dataDir: string,
  ) {}

  private getKey(): Buffer {
    if (this.key) return this.key;
    if (this.configured) {
      this.key = createHash('sha256').update(this.configured, 'utf8').digest();
      return this.key;
    }
    const file = path.join(this.dataDir, 'secret.key');
    fs.mkdirSync(this.dataDir, { recursive: true });
    try {
      // `wx`: two processes starting at once agree on whichever file was written first.
      fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const raw = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (raw.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    this.key = raw;
    return raw;
  }

  /** Where the key comes from, for messages. */
  get source(): string {
    return this.configured ? 'SPACES_SECRET_KEY' : path.join(this.dataDir, 'secret.key');
  }

  /**
   * A fingerprint of the key that reveals nothing about it (an HMAC of a fixed label): kept in the
   * database, so an instance with another key is refused before it seals anything no other instance
   * can open (see `checkSharedKey` in server start-up).
   */
  fingerprint(): string {
    return createHmac('sha256', this.getKey())
      .update('spaces secret-key fingerprint v1')
      .digest('hex')
      .slice(0, 32);
  }

  /** A key for one purpose (an HMAC of its label): the same on every instance that shares the secret key. */
  derive(label: string): Buffer {
    return createHmac('sha256', this.getKey()).update(`spaces derived key v1: ${label}`).digest();
  }

  seal(plain: string, aad: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.getKey(), iv);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1:${iv.toString('base64')}:${c.getAuthTag().toString('base64')}:${ct.toString('base64')}`;
  }

  open(sealed: string, aad: string): string {
    const [v, iv, tag, ct] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown secret format');
    const d = createDecipheriv('aes-256-gcm', this.getKey(), Buffer.from(iv, 'base64'));
    d.setAAD(Buffer.from(aad, 'utf8'));
    d.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64')), d.final()]).toString('utf8');
  }
}
