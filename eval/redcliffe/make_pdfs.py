#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/redcliffe/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["redcliffe/van-hire-guide"] = (
    "Redcliffe Van Hire Guide",
    "Redcliffe Vehicle Hire - Van hire guide and price list - from 2 February 2026",
    """
# Van Hire Guide
Van sizes, prices and rules for hiring a Redcliffe van.
Prices from 2 February 2026. All prices include VAT at 20%.

1. CHOOSING A VAN
All our vans are diesel, with a manual gearbox, 3 seats in the cab and a
bulkhead behind the seats. You can drive every van below on a standard
UK car licence (category B), because none weighs more than 3,500 kg when
fully loaded.

Van size      Example model                Load length   Payload    Height
Small van     Ford Transit Connect         1.8 m         700 kg     1.9 m
Medium van    Ford Transit Custom          2.5 m         1,000 kg   2.0 m
Large van     Ford Transit LWB high roof   3.7 m         1,300 kg   2.7 m
Luton van*    Ford Transit Luton           4.0 m         1,000 kg   3.3 m
* The Luton van has a tail lift for loads of up to 500 kg. Never stand
  on the tail lift while it is moving.

Check the height of bridges, car parks and drive-throughs on your route:
the Luton van will not fit under many of them.

2. PRICES
Van size      Per day (1-2 days)   Per day (3-6 days)   Per week
Small van     GBP 55               GBP 48               GBP 288
Medium van    GBP 69               GBP 61               GBP 366
Large van     GBP 85               GBP 75               GBP 450
Luton van     GBP 109              GBP 96               GBP 576

Every van hire includes 100 miles a day. Each extra mile costs 25p.
Unlimited mileage is not available on vans.
<<PAGE>>
3. MOVING DAY EXTRAS
Item                                   Price
Sack truck                             GBP 10 per rental
Furniture blankets (pack of 10)        GBP 12 per rental
Ratchet straps (set of 4)              GBP 8 per rental
Fuel Prepay                            as for cars

Extras must be booked in advance, as each branch has only a few. Sack
trucks and blankets returned damaged or dirty are charged at replacement
cost.

4. DRIVERS, DEPOSIT AND COVER
The minimum age is 23 for small and medium vans and 25 for large and
Luton vans. Drivers of large and Luton vans must have held a full licence
for at least 3 years. Young driver surcharges do not apply to vans,
because we do not rent vans to drivers under 23.

We hold a deposit of GBP 400 on your card for every van. The damage
excess for all vans is GBP 1,750, which Excess Reduction Plus reduces to
GBP 250. Zero Excess is not available for vans. Damage to the roof or
the top of the load area, for example from a low bridge, is never cover-
ed by Excess Reduction Plus.

5. ONE-WAY VAN HIRE
You can return a van to a different branch for a flat one-way fee of
GBP 95, whatever the distance. One-way hire is not available for Luton
vans.

6. LOADING SAFELY
Spread the load evenly, put heavy items against the bulkhead and tie
everything down. Do not carry passengers in the load area. Overloaded
vans are unsafe, invalidate your cover and can be stopped by the police.

For van bookings call Reservations on 0808 157 0640.
""",
)

DOCS["mealbox/fees-and-charges-schedule"] = (
    "Mealbox fees and charges schedule",
    "Mealbox Canada Inc. - Schedule of fees and charges - effective 2026-01-05",
    """
# Schedule of Fees and Charges
Mealbox Canada Inc. - effective January 5, 2026
All amounts are in Canadian dollars (CAD) and are before GST, HST or QST.

1. SHIPPING
Shipping is charged once per box and depends on the delivery address.

Region                                       Shipping per box
Ontario and Quebec                           CAD 10.99
British Columbia and Alberta                 CAD 12.99
Manitoba and Saskatchewan                    CAD 14.99
Nova Scotia, New Brunswick and P.E.I.        CAD 14.99
Newfoundland and Labrador                    CAD 17.99
Rural postal codes (surcharge, all regions)  CAD 3.00 extra

Shipping is free on a box of 5 recipes for 2 people. It is never free
on boxes that use a first-box or referral discount.

2. RECIPE AND ADD-ON PRICES
Item                                         Price
Premium recipe surcharge                     CAD 4.99 per serving
Breakfast add-on (overnight oats, frittata)  CAD 5.99 per serving
Dessert add-on                               CAD 4.49 per serving
Ready-to-heat soup (2 servings)              CAD 8.99 each
Extra protein (double portion)               CAD 3.49 per serving
<<PAGE>>
3. CREDITS WE GIVE
Item                                         Amount
Box return credit (GTA, Ottawa, Montreal)    CAD 1.50 per box
Late delivery credit                         CAD 10.00 per box
Referral credit, per friend                  CAD 25.00
Proactive incident credit                    as announced

Credits are applied to your next box before your card is charged and
expire 12 months after they are issued, except referral credits, which
expire after 6 months.

4. GIFT CARDS
Gift cards are sold in amounts of CAD 50, CAD 100 and CAD 150. Gift card
balances do not expire and cannot be exchanged for cash. They can pay
for boxes, add-ons and shipping, but not for other gift cards.

5. CHARGES WE DO NOT MAKE
- No sign-up fee, cancellation fee or reactivation fee.
- No fee for skipping a week or pausing your plan.
- No fee for a declined payment. If a payment is declined at cut-off,
  we retry once after 12 hours; if that also fails, the box is cancel-
  led.

6. TAXES
Most of our meal kits are taxable at the rate for prepared food in
your province. The tax for each box is shown on your receipt.

For questions about a charge, contact Customer Care at 1-888-555-0162
or support@mealbox.example.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "redcliffe make_pdfs.py")


if __name__ == "__main__":
    main()
