import type { preValidationHookHandler } from 'fastify';
import type { Principal } from '../domain/auth/principal.ts';
import type { Services } from '../services.ts';
import type { RouteSpec } from './route.ts';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    routeSpecs: RouteSpec[];
    authenticate: preValidationHookHandler;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    spec?: RouteSpec;
  }
}
