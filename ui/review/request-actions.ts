/**
 * The actions a reviewer takes on a request, each the route of the contract it calls with the
 * body that route takes, so the compiler holds the page to the API.
 */
import type { paths } from '../../clients/typescript/src/index.js';
import { api } from '../shared/api.js';

type Path = keyof paths;
type BodyOf<P extends Path, M extends 'post' | 'put'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } }
  ? B
  : undefined;

export interface RequestActions {
  '/merge': BodyOf<'/merge-requests/{id}/merge', 'post'>;
  '/close': undefined;
  '/revise': undefined;
  '/checks': undefined;
  '/reviews': BodyOf<'/merge-requests/{id}/reviews', 'post'>;
  '/resolutions': BodyOf<'/merge-requests/{id}/resolutions', 'put'>;
}
export type RequestAction = keyof RequestActions;

/** Calls one action on request `id`. */
export function requestAction<A extends RequestAction>(
  id: string,
  action: A,
  body: RequestActions[A],
): Promise<{ data?: unknown; error?: unknown; response: Response }> {
  const c = api();
  const params = { path: { id } };
  const b = body as never;
  switch (action) {
    case '/merge':
      return c.POST('/merge-requests/{id}/merge', { params, body: b });
    case '/close':
      return c.POST('/merge-requests/{id}/close', { params });
    case '/revise':
      return c.POST('/merge-requests/{id}/revise', { params });
    case '/checks':
      return c.POST('/merge-requests/{id}/checks', { params });
    case '/reviews':
      return c.POST('/merge-requests/{id}/reviews', { params, body: b });
    default:
      return c.PUT('/merge-requests/{id}/resolutions', { params, body: b });
  }
}
