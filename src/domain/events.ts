import { EventEmitter } from 'node:events';

/**
 * In-process notifications between areas. `space.changed` tells caches (the site edge) that
 * something a site depends on moved: settings, channels, hostnames, state.
 */
export class DomainEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(100);
  }

  spaceChanged(spaceId: string): void {
    this.emitter.emit('space.changed', spaceId);
  }

  onSpaceChanged(listener: (spaceId: string) => void): () => void {
    this.emitter.on('space.changed', listener);
    return () => this.emitter.off('space.changed', listener);
  }
}
