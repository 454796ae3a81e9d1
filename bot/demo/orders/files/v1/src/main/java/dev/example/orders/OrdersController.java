package dev.example.orders;

import java.util.List;

import io.sentry.Sentry;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping("/orders")
public class OrdersController {

    private final OrderService orders;

    public OrdersController(OrderService orders) {
        this.orders = orders;
    }

    @PostMapping
    @ResponseStatus(HttpStatus.CREATED)
    public Order create(@RequestHeader(name = "X-Client-Version", defaultValue = "unknown") String clientVersion,
                        @RequestBody CreateOrderRequest request) {
        Sentry.setTag("client_version", clientVersion);
        return orders.create(request);
    }

    @GetMapping("/search")
    public List<Order> search(@RequestHeader(name = "X-Client-Version", defaultValue = "unknown") String clientVersion,
                              @RequestParam(name = "q", defaultValue = "") String query,
                              @RequestParam(name = "limit", defaultValue = "50") int limit) {
        Sentry.setTag("client_version", clientVersion);
        return orders.search(query, limit);
    }
}
