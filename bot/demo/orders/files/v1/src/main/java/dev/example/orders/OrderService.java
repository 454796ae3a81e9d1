package dev.example.orders;

import java.time.Clock;
import java.time.Instant;
import java.util.List;

import org.springframework.stereotype.Service;

@Service
public class OrderService {

    private static final int MAX_SEARCH_RESULTS = 200;

    private final OrderRepository repository;
    private final Clock clock;

    public OrderService(OrderRepository repository, Clock clock) {
        this.repository = repository;
        this.clock = clock;
    }

    public Order create(CreateOrderRequest request) {
        if (request.quantity() < 1) {
            throw new IllegalArgumentException("quantity must be at least 1");
        }
        CustomerReference reference = new CustomerReference(request.customerReference());
        Order order = new Order(null, request.quantity(), reference.value(), Instant.now(clock));
        return repository.save(order);
    }

    public List<Order> search(String query, int limit) {
        return repository.search(query.strip(), Math.min(limit, MAX_SEARCH_RESULTS));
    }
}
