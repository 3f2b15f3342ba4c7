import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The outbox: one row per event, written in the transaction of the change it describes, so an
 * event exists exactly when its change committed. Live streams replay from it after a
 * reconnect (`Last-Event-ID`), other API processes on the same PostgreSQL read the events of
 * their neighbours from it, and webhooks will be delivered from it. Rows are kept a day.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Ids only ever grow (AUTOINCREMENT on SQLite; a 64-bit sequence on PostgreSQL), even after
  // every row has been pruned: a stream that resumes after id N must never miss a lower new one.
  const idType = queryInterface.sequelize.getDialect() === 'postgres' ? DataTypes.BIGINT : DataTypes.INTEGER;
  await queryInterface.createTable('outbox', {
    id: { type: idType, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    type: { type: DataTypes.STRING(32), allowNull: false },
    review_id: { type: DataTypes.INTEGER, allowNull: false },
    // The record as the API returns it, as JSON.
    payload: { type: DataTypes.TEXT, allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('outbox', ['created_at'], { name: 'outbox_created_at' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('outbox');
}
