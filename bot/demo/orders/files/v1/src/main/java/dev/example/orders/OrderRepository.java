package dev.example.orders;

import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.util.List;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.stereotype.Repository;

@Repository
public class OrderRepository {

    private static final RowMapper<Order> ORDER = (rs, row) -> new Order(
            rs.getLong("id"),
            rs.getInt("quantity"),
            rs.getString("customer_reference"),
            rs.getTimestamp("created_at").toInstant());

    private final JdbcTemplate jdbc;

    public OrderRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
        this.jdbc.setQueryTimeout(5);
    }

    public Order save(Order order) {
        GeneratedKeyHolder keys = new GeneratedKeyHolder();
        jdbc.update(connection -> {
            PreparedStatement statement = connection.prepareStatement(
                    "insert into orders (quantity, customer_reference, created_at) values (?, ?, ?)",
                    new String[] {"id"});
            statement.setInt(1, order.quantity());
            statement.setString(2, order.customerReference());
            statement.setTimestamp(3, Timestamp.from(order.createdAt()));
            return statement;
        }, keys);
        return order.withId(keys.getKey().longValue());
    }

    public List<Order> search(String query, int limit) {
        return jdbc.query("select id, quantity, customer_reference, created_at from orders"
                + " where customer_reference ilike ? order by created_at desc limit ?",
                ORDER, "%" + query + "%", limit);
    }
}
