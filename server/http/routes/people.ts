import { type Request, Router } from 'express';
import type { PeopleService, TeamInput, UserChanges, UserInput } from '../../domain/people/people';
import { principalOf } from '../auth';
import { pathInteger } from '../params';

/**
 * The people of an organization and their teams (hosted edition only: 404 in the self-hosted
 * one). A new person gets an invitation link to set their password (see sessions.ts).
 *
 * @openapi
 * components:
 *   parameters:
 *     UserId:
 *       name: user_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *     TeamId:
 *       name: team_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *   responses:
 *     LastAdmin:
 *       description: >-
 *         The person is the organization's last active admin: demoted or deactivated, they would
 *         leave no one to manage it from the console. Make another person an admin first.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Conflict, status: 409, detail: "user 3 is the organization's last active admin, so they cannot be made a viewer: make another person an admin first" }
 *   schemas:
 *     UserCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [email, name, role]
 *       properties:
 *         email: { type: string, minLength: 3, maxLength: 320, description: 'Unique in the organization, in any case (409 otherwise).' }
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         role: { type: string, enum: [admin, reviewer, viewer] }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *       example: { email: dana@example.com, name: Dana Reviewer, role: reviewer }
 *     UserUpdate:
 *       type: object
 *       additionalProperties: false
 *       minProperties: 1
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         role: { type: string, enum: [admin, reviewer, viewer] }
 *         is_active: { type: boolean }
 *         slack_user_id:
 *           type: string
 *           nullable: true
 *           pattern: '^[UW][A-Z0-9]{2,30}$'
 *           description: 'Their Slack user id (U…; in Slack: their profile → ⋮ → Copy member ID): a click in Slack is theirs. Null unlinks; without one, the Slack user with their e-mail is.'
 *       example: { role: admin }
 *     User:
 *       type: object
 *       required: [id, organization_id, email, name, role, is_active, password_set, slack_user_id, created_at, updated_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         email: { type: string }
 *         name: { type: string }
 *         role: { type: string, enum: [admin, reviewer, viewer] }
 *         is_active: { type: boolean }
 *         password_set: { type: boolean, description: 'False until the person has set a password through their invitation link.' }
 *         slack_user_id: { type: string, nullable: true, description: 'Their Slack user, when an admin linked it (see UserUpdate).' }
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *       example: { id: 5, organization_id: 1, email: dana@example.com, name: Dana Reviewer, role: reviewer, is_active: true, password_set: true, slack_user_id: null, created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z' }
 *     Invitation:
 *       type: object
 *       required: [invitation_url, invitation_expires_at]
 *       properties:
 *         invitation_url: { type: string, format: uri, description: 'Opens the dashboard page where the person sets a password; shown this once, works once, for 7 days. An earlier link of the person stops working.' }
 *         invitation_expires_at: { type: string, format: date-time }
 *       example: { invitation_url: 'https://review.example.com/#/invitation/Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5', invitation_expires_at: '2026-12-01T09:00:00.000Z' }
 *     InvitedUser:
 *       allOf:
 *         - { $ref: '#/components/schemas/User' }
 *         - { $ref: '#/components/schemas/Invitation' }
 *     UserList:
 *       type: object
 *       required: [users, count]
 *       properties:
 *         users:
 *           type: array
 *           items: { $ref: '#/components/schemas/User' }
 *         count: { type: integer }
 *     TeamCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *         member_ids:
 *           type: array
 *           maxItems: 1000
 *           items: { type: integer, minimum: 1 }
 *           description: Users of the organization (404 for any other).
 *         settings: { type: object, additionalProperties: true }
 *       example: { name: finance, member_ids: [5] }
 *     Team:
 *       type: object
 *       required: [id, organization_id, name, members, settings, created_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         name: { type: string }
 *         members:
 *           type: array
 *           items:
 *             type: object
 *             required: [id, email, name, role]
 *             properties:
 *               id: { type: integer }
 *               email: { type: string }
 *               name: { type: string }
 *               role: { type: string, enum: [admin, reviewer, viewer] }
 *         settings: { type: object, additionalProperties: true }
 *         created_at: { type: string, format: date-time }
 *       example: { id: 2, organization_id: 1, name: finance, members: [{ id: 5, email: dana@example.com, name: Dana Reviewer, role: reviewer }], settings: {}, created_at: '2026-11-24T09:00:00.000Z' }
 *     TeamList:
 *       type: object
 *       required: [teams, count]
 *       properties:
 *         teams:
 *           type: array
 *           items: { $ref: '#/components/schemas/Team' }
 *         count: { type: integer }
 */
export function peopleRoutes(people: PeopleService): Router {
  const router = Router();

  /**
   * @openapi
   * /users:
   *   post:
   *     operationId: createUser
   *     tags: [people]
   *     summary: Add a person to the organization (admin)
   *     description: >-
   *       Hosted edition only. Roles are admin (manage), reviewer (decide) and viewer (read).
   *       The answer carries the person's invitation link, this once: send it to them.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/UserCreate' }
   *     responses:
   *       '201':
   *         description: The user, with their invitation link.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/InvitedUser' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The organization already has a user with this e-mail.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Conflict, status: 409, detail: the organization already has a user with the e-mail dana@example.com }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listUsers
   *     tags: [people]
   *     summary: The organization's people, deactivated ones included (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every user of the organization, oldest first.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/UserList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/users', async (req: Request<unknown, unknown, UserInput>, res) => {
    res.status(201).json(await people.createUser(principalOf(res), req.body));
  });

  router.get('/users', async (_req, res) => {
    res.json(await people.listUsers(principalOf(res)));
  });

  /**
   * @openapi
   * /users/{user_id}:
   *   get:
   *     operationId: getUser
   *     tags: [people]
   *     summary: One person of the organization (admin)
   *     description: Hosted edition only. Another organization's user is a 404.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/UserId' }]
   *     responses:
   *       '200':
   *         description: The user.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/User' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateUser
   *     tags: [people]
   *     summary: Rename, change the role of, reactivate, or link to Slack a person (admin)
   *     description: >-
   *       Hosted edition only. The organization's last active admin person keeps that role
   *       (409): make another person an admin first. A Slack user linked to another person is
   *       409 too: one Slack user decides as one person.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/UserId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/UserUpdate' }
   *     responses:
   *       '200':
   *         description: The user as they now are.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/User' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The change would leave the organization without an active admin, or the Slack user is another person's.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Conflict, status: 409, detail: "the Slack user U0ANA is already Ana's (user 5); clear it there first" }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: deactivateUser
   *     tags: [people]
   *     summary: Deactivate a person (admin)
   *     description: >-
   *       Hosted edition only. The user is kept, inactive (`is_active: false`), so that what
   *       they decided keeps its author, and signed out of every session at once; PATCH
   *       `is_active: true` brings them back. The organization's last active admin person is
   *       not deactivated (409).
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/UserId' }]
   *     responses:
   *       '204': { description: Deactivated. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409': { $ref: '#/components/responses/LastAdmin' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/users/:user_id', async (req, res) => {
    res.json(await people.getUser(principalOf(res), pathInteger(req, 'user_id')));
  });

  router.patch('/users/:user_id', async (req: Request<{ user_id: string }, unknown, UserChanges>, res) => {
    res.json(await people.updateUser(principalOf(res), pathInteger(req, 'user_id'), req.body));
  });

  router.delete('/users/:user_id', async (req, res) => {
    await people.deactivateUser(principalOf(res), pathInteger(req, 'user_id'));
    res.status(204).end();
  });

  /**
   * @openapi
   * /users/{user_id}/invitation:
   *   post:
   *     operationId: reinviteUser
   *     tags: [people]
   *     summary: A new invitation link for a person (admin)
   *     description: >-
   *       Hosted edition only. For a person who lost their link or forgot their password: the
   *       new link lets them set a password (again), and any earlier link stops working.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/UserId' }]
   *     responses:
   *       '201':
   *         description: The link, shown this once.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Invitation' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The person is deactivated.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/users/:user_id/invitation', async (req, res) => {
    res.status(201).json(await people.reinvite(principalOf(res), pathInteger(req, 'user_id')));
  });

  /**
   * @openapi
   * /teams:
   *   post:
   *     operationId: createTeam
   *     tags: [people]
   *     summary: Form a team (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/TeamCreate' }
   *     responses:
   *       '201':
   *         description: The team with its members.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Team' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listTeams
   *     tags: [people]
   *     summary: The organization's teams with their members (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every team, oldest first.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/TeamList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/teams', async (req: Request<unknown, unknown, TeamInput>, res) => {
    res.status(201).json(await people.createTeam(principalOf(res), req.body));
  });

  router.get('/teams', async (_req, res) => {
    res.json(await people.listTeams(principalOf(res)));
  });

  /**
   * @openapi
   * /teams/{team_id}:
   *   get:
   *     operationId: getTeam
   *     tags: [people]
   *     summary: One team with its members (admin)
   *     description: Hosted edition only. Another organization's team is a 404.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/TeamId' }]
   *     responses:
   *       '200':
   *         description: The team.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Team' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/teams/:team_id', async (req, res) => {
    res.json(await people.getTeam(principalOf(res), pathInteger(req, 'team_id')));
  });

  /**
   * @openapi
   * /teams/{team_id}/members/{user_id}:
   *   put:
   *     operationId: addTeamMember
   *     tags: [people]
   *     summary: Add a person to a team (admin)
   *     description: Hosted edition only. Adding a member twice changes nothing.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/TeamId' }, { $ref: '#/components/parameters/UserId' }]
   *     responses:
   *       '200':
   *         description: The team as it now is.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Team' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: removeTeamMember
   *     tags: [people]
   *     summary: Take a person off a team (admin)
   *     description: Hosted edition only. Removing a non-member changes nothing.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/TeamId' }, { $ref: '#/components/parameters/UserId' }]
   *     responses:
   *       '200':
   *         description: The team as it now is.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Team' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.put('/teams/:team_id/members/:user_id', async (req, res) => {
    res.json(await people.setMember(principalOf(res), pathInteger(req, 'team_id'), pathInteger(req, 'user_id'), true));
  });

  router.delete('/teams/:team_id/members/:user_id', async (req, res) => {
    res.json(await people.setMember(principalOf(res), pathInteger(req, 'team_id'), pathInteger(req, 'user_id'), false));
  });

  return router;
}
